// The workflow code a worker runs: dist/workflow-bundle.js, bundled by `npm run build`
// (scripts/build.ts), as Temporal's samples-typescript `production` sample does. A worker never
// runs webpack: bundling at start-up cost seconds and left webpack's heap behind for the worker's
// whole life. A bundle older than the sources is refused, naming the file and the fix, so a worker
// never runs workflow code other than the checkout's.
import { access } from 'node:fs/promises';
import { assertBuilt, built } from '../bin/built';

/** The path of the built bundle of workflows/ for `Worker.create({ workflowBundle: { codePath } })`. */
export async function workflowBundlePath(): Promise<string> {
  assertBuilt();
  const codePath = built('workflow-bundle.js');
  await access(codePath);
  return codePath;
}
