// A per-endpoint cap on requests in flight from this worker process. Chunks running side by side
// on one worker share it, so `max_concurrency` is what one worker sends to one server whatever the
// chunk window; the fleet-wide load is that times the number of workers.

class Semaphore {
  private waiting: Array<() => void> = [];
  private active = 0;
  constructor(private limit: number) {}

  setLimit(limit: number): void {
    this.limit = limit;
    this.wakeWaiters();
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) {
      // The releaser hands its slot straight to us (active is not decremented), so no one can overtake.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.active <= this.limit ? this.waiting.shift() : undefined;
      if (next) next();
      else this.active--;
    }
  }

  private wakeWaiters(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      this.waiting.shift()!();
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
