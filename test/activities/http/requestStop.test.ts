import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestStop } from '../../../activities/http/requestStop';

// A request's stop reaches undici's abort whenever it comes: before the request connected, after,
// or not at all once the request settled. client.test.ts runs the same through real requests.

const recorder = () => {
  const calls: Array<Error | undefined> = [];
  return { calls, abort: (reason?: Error) => void calls.push(reason) };
};

test('a stop before the request connected aborts it as it connects, with the reason', () => {
  const stop = new RequestStop();
  const reason = new Error('timed out');
  stop.stop(reason);
  const { calls, abort } = recorder();
  stop.connected(abort);
  assert.deepEqual(calls, [reason]);
});

test('a stop after the request connected aborts it once, whatever stops it again', () => {
  const stop = new RequestStop();
  const { calls, abort } = recorder();
  stop.connected(abort);
  assert.deepEqual(calls, []);
  const reason = new Error('cancelled');
  stop.stop(reason);
  stop.stop(new Error('timed out'));
  assert.deepEqual(calls, [reason]);
});

test('a reason that is not an Error leaves undici its own abort error', () => {
  const stop = new RequestStop();
  const { calls, abort } = recorder();
  stop.connected(abort);
  stop.stop('operator reset');
  assert.deepEqual(calls, [undefined]);
});

test('a stop after the request settled aborts nothing', () => {
  const stop = new RequestStop();
  const { calls, abort } = recorder();
  stop.connected(abort);
  stop.settled();
  stop.stop(new Error('timed out'));
  assert.deepEqual(calls, []);
});
