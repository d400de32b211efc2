import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { CloudError } from '../../src/cloud/index.ts';
import type { CoeContext } from '../../src/cli/coe-context.ts';
import { CommandFailedError } from '../../src/cli/coe-errors.ts';
import { formatElapsed, waitFor, type Observed, type WaitTarget } from '../../src/cli/wait.ts';

function context(clock: ManualClock): { ctx: CoeContext; err: () => string } {
  let err = '';
  const ctx: CoeContext = {
    stdout: { write: () => true },
    stderr: { write: (s: string) => void (err += s) },
    env: {},
    cwd: '.',
    clock,
    client: () => Promise.reject(new Error('no client in this test')),
  };
  return { ctx, err: () => err };
}

/** A target that reports the given observations in turn (the last one repeats). */
function scripted(
  action: WaitTarget['action'],
  steps: (Observed | null | Error)[],
): WaitTarget & { calls: number } {
  const t = {
    label: 'cluster prod',
    action,
    calls: 0,
    observe() {
      const step = steps[Math.min(t.calls, steps.length - 1)]!;
      t.calls++;
      return step instanceof Error ? Promise.reject(step) : Promise.resolve(step);
    },
  };
  return t;
}

const inProgress = (reason: string | null = null): Observed => ({ status: 'CREATE_IN_PROGRESS', reason });

test('--wait polls until CREATE_COMPLETE and reports each change with the elapsed time', async () => {
  const clock = new ManualClock();
  const { ctx, err } = context(clock);
  const target = scripted('CREATE', [
    inProgress(),
    inProgress('Creating control plane'),
    inProgress('Creating control plane'),
    { status: 'CREATE_COMPLETE', reason: 'Cluster is ready' },
  ]);
  const done = waitFor(ctx, target, { pollInterval: 5, timeout: 60 });
  for (let i = 0; i < 3; i++) await clock.advance(5000);
  await done;
  assert.equal(target.calls, 4);
  assert.deepEqual(err().trimEnd().split('\n'), [
    '[0s] cluster prod: CREATE_IN_PROGRESS',
    '[5s] cluster prod: CREATE_IN_PROGRESS - Creating control plane',
    '[15s] cluster prod: CREATE_COMPLETE - Cluster is ready',
    'cluster prod: CREATE_COMPLETE after 15s',
  ]);
});

test('--wait fails with the status reason when the cluster ends *_FAILED', async () => {
  const clock = new ManualClock();
  const { ctx } = context(clock);
  const target = scripted('CREATE', [
    inProgress(),
    { status: 'CREATE_FAILED', reason: 'missing required field: keypair' },
  ]);
  const done = assert.rejects(
    waitFor(ctx, target, { pollInterval: 5 }),
    (e: unknown) =>
      e instanceof CommandFailedError &&
      /CREATE_FAILED after 5s: missing required field: keypair/.test(e.message),
  );
  await clock.advance(5000);
  await done;
});

test('an update does not stop at the CREATE_COMPLETE seen before the request took effect', async () => {
  const clock = new ManualClock();
  const { ctx } = context(clock);
  const target = scripted('UPDATE', [
    { status: 'CREATE_COMPLETE', reason: null },
    { status: 'UPDATE_IN_PROGRESS', reason: null },
    { status: 'UPDATE_COMPLETE', reason: null },
  ]);
  const done = waitFor(ctx, target, { pollInterval: 1 });
  await clock.advance(1000);
  await clock.advance(1000);
  await done;
  assert.equal(target.calls, 3);
});

test('an update that changed nothing ends after a few polls instead of waiting for the time limit', async () => {
  const clock = new ManualClock();
  const { ctx, err } = context(clock);
  const target = scripted('UPDATE', [{ status: 'CREATE_COMPLETE', reason: null }]);
  const done = waitFor(ctx, target, { pollInterval: 5 });
  for (let i = 0; i < 2; i++) await clock.advance(5000);
  await done;
  assert.equal(target.calls, 3);
  assert.match(err(), /cluster prod: CREATE_COMPLETE \(unchanged\) after 10s/);
});

test('a delete is done when the object is gone', async () => {
  const clock = new ManualClock();
  const { ctx, err } = context(clock);
  const target = scripted('DELETE', [{ status: 'DELETE_IN_PROGRESS', reason: null }, null]);
  const done = waitFor(ctx, target, { pollInterval: 2 });
  await clock.advance(2000);
  await done;
  assert.match(err(), /cluster prod: deleted after 2s/);
});

test('a create whose object vanishes fails', async () => {
  const clock = new ManualClock();
  const { ctx } = context(clock);
  await assert.rejects(waitFor(ctx, scripted('CREATE', [null]), {}), /disappeared/);
});

test('--wait gives up after --timeout minutes with the last status', async () => {
  const clock = new ManualClock();
  const { ctx } = context(clock);
  const done = waitFor(ctx, scripted('CREATE', [inProgress()]), { pollInterval: 30, timeout: 1 });
  const check = assert.rejects(
    done,
    (e: unknown) =>
      e instanceof CommandFailedError &&
      /gave up waiting for cluster prod after 1m00s; last status CREATE_IN_PROGRESS/.test(e.message),
  );
  await clock.advance(60_000);
  await check;
});

test('transient API failures while polling are reported and retried', async () => {
  const clock = new ManualClock();
  const { ctx, err } = context(clock);
  const outage = new CloudError({
    kind: 'transient',
    service: 'container-infra',
    cloudMessage: 'Service Unavailable',
    status: 503,
  });
  const target = scripted('CREATE', [inProgress(), outage, { status: 'CREATE_COMPLETE', reason: null }]);
  const done = waitFor(ctx, target, { pollInterval: 5 });
  await clock.advance(5000);
  await clock.advance(5000);
  await done;
  assert.match(err(), /\[5s\] cluster prod: Service Unavailable; retrying/);
});

test('other API failures while polling end the wait', async () => {
  const clock = new ManualClock();
  const { ctx } = context(clock);
  const denied = new CloudError({
    kind: 'forbidden',
    service: 'container-infra',
    cloudMessage: 'Forbidden',
    status: 403,
  });
  await assert.rejects(waitFor(ctx, scripted('CREATE', [denied]), {}), CloudError);
});

test('elapsed times read like a person would write them', () => {
  assert.equal(formatElapsed(42_000), '42s');
  assert.equal(formatElapsed(65_000), '1m05s');
  assert.equal(formatElapsed(2 * 3600_000 + 3 * 60_000), '2h03m');
});

test('on a terminal the current status and elapsed time are redrawn in place between changes', async () => {
  const clock = new ManualClock();
  let err = '';
  const { ctx } = context(clock);
  ctx.stderr = { isTTY: true, write: (s: string) => void (err += s) };
  const target = scripted('CREATE', [
    inProgress(),
    inProgress(),
    { status: 'CREATE_COMPLETE', reason: null },
  ]);
  const done = waitFor(ctx, target, { pollInterval: 5 });
  await clock.advance(5000);
  await clock.advance(5000);
  await done;
  // eslint-disable-next-line no-control-regex -- the terminal redraw escape is what is asserted
  assert.match(err, /\r\x1b\[Kcluster prod: CREATE_IN_PROGRESS \(5s\)/);
  assert.ok(
    err.endsWith('\r\x1b[K[10s] cluster prod: CREATE_COMPLETE\ncluster prod: CREATE_COMPLETE after 10s\n'),
    JSON.stringify(err),
  );
});
