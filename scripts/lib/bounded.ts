// A wait with a bound: harness code never waits on a process, socket or run without one, and when
// the bound is hit the error names what it was waiting for.

export class StallError extends Error {}

/** `promise`, or a StallError naming `what` once `ms` have passed without it settling. */
export async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StallError(`${what}: nothing within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
