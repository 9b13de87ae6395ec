// A per-endpoint cap on requests in flight from this worker process. Chunks running side by side
// on one worker share it, so `max_concurrency` is what one worker sends to one server whatever the
// chunk window; the fleet-wide load is that times the number of workers.
//
// Waiting requests are served oldest chunk first, not in arrival order. In arrival order the chunks
// in flight share the cap evenly and all end together, near the end of their window: a stage's
// progress (counted as chunks complete) and its merges during the chunk phase then stand still for
// most of the window and move at its end. Oldest first, one chunk holds the cap while the later ones
// wait and fill it as it ends, so chunks complete one after another and progress moves with them.

interface Waiter {
  rank: number;
  wake: () => void;
}

/** Inserts `waiter` after every waiter of a lower or equal rank, so equal ranks keep arrival order. */
export function insertByRank<W extends { rank: number }>(waiting: W[], waiter: W): void {
  // Ranks mostly arrive in order, so the walk from the back is short.
  let at = waiting.length;
  while (at > 0 && waiting[at - 1]!.rank > waiter.rank) at--;
  waiting.splice(at, 0, waiter);
}

class Semaphore {
  /** Sorted by rank; among equal ranks, in arrival order. */
  private waiting: Waiter[] = [];
  private active = 0;
  constructor(private limit: number) {}

  setLimit(limit: number): void {
    this.limit = limit;
    this.wakeWaiters();
  }

  /** Runs `task` once a slot is free; among waiting tasks, the lowest `rank` goes first. */
  async run<T>(task: () => Promise<T>, rank = 0): Promise<T> {
    if (this.active >= this.limit) {
      // The releaser hands its slot straight to us (active is not decremented), so no one can overtake.
      await new Promise<void>((wake) => this.enqueue({ rank, wake }));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.active <= this.limit ? this.waiting.shift() : undefined;
      if (next) next.wake();
      else this.active--;
    }
  }

  private enqueue(waiter: Waiter): void {
    insertByRank(this.waiting, waiter);
  }

  private wakeWaiters(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      this.waiting.shift()!.wake();
    }
  }
}

const limiters = new Map<string, Semaphore>();

export function endpointLimiter(url: string, limit: number): Semaphore {
  const origin = new URL(url).origin;
  let limiter = limiters.get(origin);
  if (!limiter) {
    limiter = new Semaphore(limit);
    limiters.set(origin, limiter);
  } else {
    limiter.setLimit(limit);
  }
  return limiter;
}

let ranksIssued = 0;

/**
 * The rank of a chunk's requests at every endpoint limiter: each call returns a higher one, so a
 * chunk that started earlier in this process is served before those that started after it.
 */
export function nextChunkRank(): number {
  return ++ranksIssued;
}
