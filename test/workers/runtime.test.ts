import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Runtime } from '@temporalio/worker';
import { installWorkerRuntime, LOG_LEVEL_ENV, sdkLogLevel } from '../../workers/runtime';

test('SDK logs at WARN unless --verbose or the variable asks for more', () => {
  assert.equal(sdkLogLevel({}, {}), 'WARN');
  assert.equal(sdkLogLevel({ verbose: true }, {}), 'INFO');
  assert.equal(sdkLogLevel({}, { [LOG_LEVEL_ENV]: 'debug' }), 'DEBUG');
  assert.equal(sdkLogLevel({ verbose: true }, { [LOG_LEVEL_ENV]: 'ERROR' }), 'INFO');
  assert.throws(
    () => sdkLogLevel({}, { [LOG_LEVEL_ENV]: 'loud' }),
    new RegExp(`${LOG_LEVEL_ENV}: loud: expected one of`),
  );
});

test("the installed Runtime drops the SDK INFO objects a worker logs and keeps its warnings, but the host worker's expected one", () => {
  delete process.env[LOG_LEVEL_ENV];
  installWorkerRuntime();
  const written: string[] = [];
  // Kept to be put back as it was; it is never called detached from process.stderr.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) =>
    written.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    // What a worker logs at INFO as it starts and stops, and a warning it must still show.
    Runtime.instance().logger.info('Worker state changed', { sdkComponent: 'worker', state: 'RUNNING' });
    Runtime.instance().logger.warn('No workflows registered, not polling for workflow tasks', {
      sdkComponent: 'worker',
    });
    Runtime.instance().logger.warn('Activity failed', { sdkComponent: 'activity', attempt: 2 });
  } finally {
    process.stderr.write = write;
  }
  assert.equal(written.length, 1, written.join(''));
  assert.match(written[0]!, /\[WARN\] Activity failed/);
});
