// Named points on the write path where a test can hold an attempt, the way a GC pause, a stopped
// process or a hung NFS call would: between a claim and the first open, between a merge's rename and
// its open, between a merge's look at the fence and its write, before the finish creates its view,
// right after a pool version is committed, before early samples are filed in place, before an
// early segment is renamed into place. Nothing is registered outside tests, and an unregistered
// point costs a map lookup.

export type PausePoint =
  | 'fence.claimed'
  | 'chunk.opened'
  | 'merge.renamed'
  | 'merge.checked'
  | 'finish.checked'
  | 'version.committed'
  | 'filing.committing'
  | 'segment.built';

type Hook = (token: string) => Promise<void> | void;

const hooks = new Map<PausePoint, Hook>();

/** Holds the attempt named `token` at `point` while a test's hook runs. */
export async function pauseAt(point: PausePoint, token: string): Promise<void> {
  await hooks.get(point)?.(token);
}

/** Registers a test's hook at `point`; returns the function that removes it. */
export function onPause(point: PausePoint, hook: Hook): () => void {
  hooks.set(point, hook);
  return () => {
    if (hooks.get(point) === hook) hooks.delete(point);
  };
}
