// A kubeconfig made in the browser: the private key never leaves the page. The key pair and a
// PKCS#10 certificate request are made with WebCrypto; the cluster CA signs the request through
// Magnum's public `POST /v1/certificates`, as `openstack coe cluster config` does.

function der(tag, ...parts) {
  const body = parts.flatMap((p) => Array.from(p));
  const n = body.length;
  const len =
    n < 128
      ? [n]
      : n < 256
        ? [0x81, n]
        : n < 65536
          ? [0x82, n >> 8, n & 255]
          : [0x83, n >> 16, (n >> 8) & 255, n & 255];
  return Uint8Array.from([tag, ...len, ...body]);
}
const SEQ = 0x30,
  SET = 0x31;
const oid = (bytes) => der(0x06, Uint8Array.from(bytes));
const utf8 = (s) => der(0x0c, new TextEncoder().encode(s));
const rdn = (o, v) => der(SET, der(SEQ, oid(o), utf8(v)));
const b64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
const pem = (label, bytes) =>
  `-----BEGIN ${label}-----\n${b64(bytes)
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;
const b64text = (s) => btoa(unescape(encodeURIComponent(s)));

/**
 * A new RSA key and a certificate request for it (subject O=org, CN=cn), both PEM.
 * @returns {Promise<{ csr: string, key: string }>}
 */
export async function makeCsr(cn, org) {
  const alg = {
    name: 'RSASSA-PKCS1-v1_5',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: 'SHA-256',
  };
  const keys = await crypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', keys.publicKey));
  const subject = der(SEQ, rdn([0x55, 0x04, 0x0a], org), rdn([0x55, 0x04, 0x03], cn));
  const info = der(SEQ, der(0x02, [0]), subject, spki, Uint8Array.from([0xa0, 0x00]));
  const sig = new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', keys.privateKey, info));
  const sigAlg = der(
    SEQ,
    oid([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]),
    Uint8Array.from([0x05, 0x00]),
  );
  const csr = der(SEQ, info, sigAlg, der(0x03, Uint8Array.from([0, ...sig])));
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { csr: pem('CERTIFICATE REQUEST', csr), key: pem('PRIVATE KEY', pkcs8) };
}

/**
 * The kubeconfig text for one cluster and one client certificate (all PEM inputs).
 * Names are quoted so that any cluster name stays valid YAML.
 */
export function kubeconfigYaml({ name, server, ca, cert, key }) {
  const q = (s) => JSON.stringify(String(s));
  return `apiVersion: v1
kind: Config
clusters:
- name: ${q(name)}
  cluster:
    server: ${q(server)}
    certificate-authority-data: ${b64text(ca)}
users:
- name: ${q(`${name}-admin`)}
  user:
    client-certificate-data: ${b64text(cert)}
    client-key-data: ${b64text(key)}
contexts:
- name: ${q(name)}
  context:
    cluster: ${q(name)}
    user: ${q(`${name}-admin`)}
current-context: ${q(name)}
`;
}
