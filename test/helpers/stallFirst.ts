import { onPause, type PausePoint } from '../../activities/run/testHooks';

// Holds the first attempt that reaches a pause point, the way a GC pause or a stopped process would,
// until the test wakes it; later attempts pass. Tests of fencing make a late attempt this way.

export interface Stall {
  /** Resolves once an attempt is held there (within 30 s). */
  held(): Promise<void>;
  /** Lets the held attempt go on. */
  wake(): void;
  /** Wakes the held attempt, if any, and unregisters the hook. */
  release(): void;
}

export function stallFirstAt(point: PausePoint): Stall {
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  let holding = false;
  const remove = onPause(point, async () => {
    if (holding) return;
    holding = true;
    await woken;
  });
  return {
    held: async () => {
      for (let i = 0; i < 600 && !holding; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      if (!holding) throw new Error(`no attempt reached ${point} within 30 s`);
    },
    wake,
    release: () => {
      wake();
      remove();
    },
  };
}
