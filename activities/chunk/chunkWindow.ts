// The rows of a chunk in flight at once: enough to keep the endpoint limiter fed, few enough that
// memory holds a window of rows, not a chunk's.

/**
 * Runs `run` on each item, at most `limit` at a time, in order of the items. Stops taking items at
 * the first failure and rethrows it once the items in flight settled; a failure is kept rather than
 * left as an unhandled rejection, which would take the whole worker down.
 */
export async function runWindow<T>(
  items: AsyncIterable<T>,
  limit: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  // A full window waits for the next item to finish through one promise; Promise.race over the
  // window would subscribe to every item in it on each wait, a promise apiece.
  let slotFreed: (() => void) | undefined;
  const settled = (task: Promise<void>): void => {
    inFlight.delete(task);
    slotFreed?.();
    slotFreed = undefined;
  };
  for await (const item of items) {
    const task: Promise<void> = run(item).then(
      () => settled(task),
      (error: unknown) => {
        failure ??= { error };
        settled(task);
      },
    );
    inFlight.add(task);
    if (inFlight.size >= limit) await new Promise<void>((resolve) => (slotFreed = resolve));
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
}
