// A worker thread of the validator's fast path (gym/validator/parallel.ts): decodes, parses and
// checks the lines of one batch at a time and answers with one outcome per line.
import { parentPort, workerData } from 'node:worker_threads';
import { acceptLineFast, type LineOutcome } from './fastRows';
import type { LineBatch } from './parallel';
import type { RowCheckOptions } from './rowChecks';

const options = workerData as RowCheckOptions;

parentPort?.on('message', (batch: LineBatch) => {
  const outcomes: LineOutcome[] = [];
  for (let i = 0; i < batch.terminated.length; i++) {
    outcomes.push(acceptLineFast(batch.bytes.subarray(batch.offsets[i], batch.offsets[i + 1]), batch.terminated[i] === 1, options));
  }
  parentPort?.postMessage({ id: batch.id, outcomes });
});
