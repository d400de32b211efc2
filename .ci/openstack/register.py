#!/usr/bin/python3
"""Service users and catalog entries for the test cloud, idempotently, in one process.

usage: register.py PASSWORD NAME:TYPE:URL ...   (admin credentials from the OS_* environment)

Each NAME gets a user in the Default domain with the admin and service roles in the "service"
project, and one service of TYPE with public/internal/admin endpoints at URL in RegionOne.
An existing user keeps its password (changing it would invalidate the running services' tokens).
"""
import os
import sys

from keystoneauth1 import exceptions, session
from keystoneauth1.identity import v3

auth = v3.Password(auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
                   password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
                   user_domain_name="Default", project_domain_name="Default")
# Keystone under uwsgi now and then resets a reused connection: retry the request on a new one.
ks = session.Session(auth=auth, connect_retries=8)
EP = {"service_type": "identity", "interface": "public"}


def get(path, key):
    return ks.get(path, endpoint_filter=EP).json()[key]


def post(path, body):
    return ks.post(path, json=body, endpoint_filter=EP).json()


def one(path, key, name, create):
    found = [x for x in get(path + "?name=" + name, key) if x["name"] == name]
    if found:
        return found[0]
    try:
        return post(path, {key[:-1]: create})[key[:-1]]
    except exceptions.Conflict:  # a retried create that had gone through the first time
        return [x for x in get(path + "?name=" + name, key) if x["name"] == name][0]


password = sys.argv[1]
project = one("/projects", "projects", "service", {"name": "service", "domain_id": "default"})
roles = {r: one("/roles", "roles", r, {"name": r})
         for r in ("admin", "service", "member", "reader", "load-balancer_member", "load-balancer_admin")}
for spec in sys.argv[2:]:
    name, stype, url = spec.split(":", 2)
    user = one("/users", "users", name, {"name": name, "password": password, "domain_id": "default"})
    for r in ("admin", "service"):
        ks.put(f"/projects/{project['id']}/users/{user['id']}/roles/{roles[r]['id']}", endpoint_filter=EP)
    services = [s for s in get("/services?type=" + stype, "services") if s["type"] == stype]
    svc = services[0] if services else post("/services", {"service": {"name": name, "type": stype}})["service"]
    have = {e["interface"]: e for e in get("/endpoints?service_id=" + svc["id"], "endpoints")}
    for itf in ("public", "internal", "admin"):
        if itf not in have:
            post("/endpoints", {"endpoint": {"service_id": svc["id"], "interface": itf, "url": url,
                                             "region_id": "RegionOne"}})
        elif have[itf]["url"] != url:
            ks.patch("/endpoints/" + have[itf]["id"], json={"endpoint": {"url": url}}, endpoint_filter=EP)
    print(f"{name}: {stype} at {url}")
