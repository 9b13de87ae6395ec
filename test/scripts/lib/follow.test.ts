import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StageLines } from '../../../scripts/lib/follow';

test('one line per stage, printed as the stage ends, with rollouts for the chunked ones', () => {
  const lines = new StageLines();
  const printed: Array<string | undefined> = [];
  const chunks = (done: number) => ({ stage: 'collect', done, total: 600, failed: 0, rolloutsPerSecond: 120, etaSeconds: null });
  printed.push(lines.observe('prepare', null, 0));
  printed.push(lines.observe('collect', chunks(100), 500));
  printed.push(lines.observe('collect', chunks(600), 4500));
  printed.push(lines.observe('convert', null, 5000));
  printed.push(lines.observe('publish', null, 5200));
  printed.push(lines.finish(6000));
  assert.deepEqual(
    printed.filter((l) => l !== undefined).map((l) => l!.replace(/ +/g, ' ')),
    ['prepare 0.5 s', 'collect 600/600 rollouts, 0 failed, 120/s, 4.5 s', 'convert 0.2 s', 'publish 0.8 s'],
  );
  assert.equal(lines.observe('done', null, 7000), undefined);
});
