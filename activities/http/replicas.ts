import { setMaxListeners } from 'node:events';
import { RequestFailure, type FailureClass } from './client';
import { endpointLimiter, insertByRank } from './endpointLimiter';
import { originLabel } from './inFlight';

// A model endpoint given as several URLs: data-parallel replicas of one policy, as NeMo Gym's
// vllm_model takes `base_url` as a list. NeMo Gym deals sessions to replicas round robin and never
// moves them; here a request goes to the replica with the fewest requests in flight that has a free
// slot under its cap (each replica gets the whole per-endpoint cap), a session stays on the replica
// that served its first request, and a replica that fails is benched so its share goes to the others.
// Waiting requests are served in the rank order of the per-endpoint limiter (oldest chunk first),
// across all replicas at once, so a slot freed on any replica goes to the oldest chunk that can use it.
// A single URL does not come here: it keeps the plain per-endpoint limiter, byte for byte as before.

/** Failures that say the replica, not the request, is at fault, so another replica may well answer. */
const REPLICA_FAILURES: ReadonlySet<FailureClass> = new Set(['connection', 'http_5xx', 'timeout']);

export interface BenchPolicy {
  /** The first bench after the replica last answered; each further failure doubles it. */
  initialMs: number;
  maxMs: number;
}

const DEFAULT_BENCH: BenchPolicy = { initialMs: 1_000, maxMs: 30_000 };

/**
 * Sessions remembered per pool. A session is forgotten only after this many newer ones, far more
 * than a worker has in flight, so memory stays flat over a million rollouts.
 */
const AFFINITY_ENTRIES = 16_384;

export interface ReplicaStats {
  /** scheme://host:port of the replica, as the config lists it (never credentials or a path). */
  readonly endpoint: string;
  /** Its position in the config's list. */
  readonly replica: number;
  readonly inFlight: number;
  readonly benched: boolean;
  /** Requests that ended on this replica, whatever the outcome. */
  readonly requests: number;
  /** Requests that failed here in a way that benches a replica, by failure class. */
  readonly failures: ReadonlyMap<FailureClass, number>;
}

class Replica implements ReplicaStats {
  inFlight = 0;
  benchedUntil = 0;
  /** Failures since the replica last answered; the next bench is initialMs · 2^(strikes - 1). */
  strikes = 0;
  /** When it was last given a request, to break ties between equally loaded replicas. */
  lastGiven = 0;
  requests = 0;
  readonly failures = new Map<FailureClass, number>();
  constructor(
    readonly replica: number,
    readonly endpoint: string,
    private readonly clock: () => number,
  ) {}

  get benched(): boolean {
    return this.clock() < this.benchedUntil;
  }
}

interface Waiter {
  rank: number;
  /** Replicas this request already failed on: it goes to another one. */
  tried: ReadonlySet<Replica>;
  /** The replica its session is on, if any. */
  session?: Replica;
  grant(replica: Replica): void;
}

export interface RunOptions {
  /** Lower ranks are served first (endpointLimiter's chunk ranks). */
  rank?: number;
  /** The session (e.g. the rollout): its requests stay on one replica while that replica is up. */
  affinity?: string;
  signal?: AbortSignal;
}

export class ReplicaPool {
  private readonly replicas: Replica[];
  private readonly waiting: Waiter[] = [];
  private readonly sessions = new Map<string, Replica>();
  private wakeAt = Infinity;
  private wakeTimer: NodeJS.Timeout | undefined;
  private given = 0;

  constructor(
    origins: readonly string[],
    private limit: number,
    private bench: BenchPolicy = DEFAULT_BENCH,
    private readonly clock: () => number = Date.now,
  ) {
    this.replicas = origins.map((origin, i) => new Replica(i, origin, clock));
  }

  setLimit(limit: number, bench: BenchPolicy = this.bench): void {
    this.limit = limit;
    this.bench = bench;
    this.pump();
  }

  stats(): readonly ReplicaStats[] {
    return this.replicas;
  }

  /**
   * Runs `call` on a replica (its index in the list given). A failure that benches the replica moves
   * the request to one not tried yet, so one failed replica does not cost the rollout an attempt;
   * once no healthy replica is left to try, the last failure is thrown for the caller's retries.
   */
  async run<T>(call: (replica: number) => Promise<T>, opts: RunOptions = {}): Promise<T> {
    const tried = new Set<Replica>();
    for (;;) {
      const replica = await this.acquire(opts.rank ?? 0, tried, opts.affinity, opts.signal);
      try {
        const value = await call(replica.replica);
        this.answered(replica);
        return value;
      } catch (err) {
        const cls = err instanceof RequestFailure ? err.failureClass : undefined;
        if (cls === undefined || cls === 'cancelled' || opts.signal?.aborted) throw err;
        if (!REPLICA_FAILURES.has(cls)) {
          // A 4xx, a 429 or a torn body is an answer: the replica is up, the request's retries decide.
          this.answered(replica);
          throw err;
        }
        this.failed(replica, cls);
        tried.add(replica);
        if (!this.replicas.some((r) => !tried.has(r) && !r.benched)) throw err;
      } finally {
        replica.inFlight--;
        replica.requests++;
        this.pump();
      }
    }
  }

  private acquire(
    rank: number,
    tried: ReadonlySet<Replica>,
    affinity: string | undefined,
    signal?: AbortSignal,
  ): Promise<Replica> {
    return new Promise<Replica>((resolve, reject) => {
      if (signal?.aborted)
        return reject(new RequestFailure('cancelled', 'cancelled while waiting for a model replica', false));
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new RequestFailure('cancelled', 'cancelled while waiting for a model replica', false));
      };
      const session = affinity === undefined ? undefined : this.sessions.get(affinity);
      const waiter: Waiter = {
        rank,
        tried,
        session: session && !tried.has(session) ? session : undefined,
        grant: (replica) => {
          signal?.removeEventListener('abort', onAbort);
          if (affinity !== undefined) this.remember(affinity, replica);
          resolve(replica);
        },
      };
      if (signal) {
        // Every waiting request of a chunk holds one listener on its signal until it gets a replica.
        setMaxListeners(0, signal);
        signal.addEventListener('abort', onAbort, { once: true });
      }
      insertByRank(this.waiting, waiter);
      this.pump();
    });
  }

  /** Gives free slots to waiters, oldest rank first; a waiter no free replica can serve is passed over. */
  private pump(): void {
    const allBenched = this.replicas.every((r) => r.benched);
    for (let i = 0; i < this.waiting.length && this.replicas.some((r) => this.hasSlot(r, allBenched));) {
      const waiter = this.waiting[i]!;
      const replica = this.choose(waiter, allBenched);
      if (!replica) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      replica.inFlight++;
      replica.lastGiven = ++this.given;
      waiter.grant(replica);
    }
    this.wakeWhenBenchEnds();
  }

  /**
   * A replica back from the bench takes one request until it answers one (a dead replica that hangs
   * would otherwise swallow a whole cap of requests until they time out). When every replica is
   * benched, the bench is ignored: waiting would only delay the failures the retry policy counts.
   */
  private hasSlot(replica: Replica, allBenched: boolean): boolean {
    if (replica.benched && !allBenched) return false;
    return replica.inFlight < (replica.strikes > 0 ? 1 : this.limit);
  }

  private choose(waiter: Waiter, allBenched: boolean): Replica | undefined {
    const session = waiter.session;
    if (session && !session.benched) return this.hasSlot(session, allBenched) ? session : undefined;
    let best: Replica | undefined;
    for (const replica of this.replicas) {
      if (waiter.tried.has(replica) || !this.hasSlot(replica, allBenched)) continue;
      if (
        !best ||
        replica.inFlight < best.inFlight ||
        (replica.inFlight === best.inFlight && replica.lastGiven < best.lastGiven)
      )
        best = replica;
    }
    return best;
  }

  private remember(session: string, replica: Replica): void {
    this.sessions.delete(session);
    this.sessions.set(session, replica);
    if (this.sessions.size > AFFINITY_ENTRIES) this.sessions.delete(this.sessions.keys().next().value!);
  }

  private answered(replica: Replica): void {
    // An answer to a request sent before the bench does not cut the bench short.
    if (!replica.benched) replica.strikes = 0;
  }

  private failed(replica: Replica, cls: FailureClass): void {
    replica.failures.set(cls, (replica.failures.get(cls) ?? 0) + 1);
    // The requests in flight when a replica dies all fail; only the first one lengthens the bench.
    if (replica.benched) return;
    replica.strikes++;
    replica.benchedUntil = this.clock() + Math.min(this.bench.maxMs, this.bench.initialMs * 2 ** (replica.strikes - 1));
  }

  /** Waiters that only a benched replica could serve are looked at again when its bench ends. */
  private wakeWhenBenchEnds(): void {
    if (this.waiting.length === 0) return;
    const now = this.clock();
    const next = Math.min(...this.replicas.filter((r) => r.benchedUntil > now).map((r) => r.benchedUntil));
    if (!Number.isFinite(next) || next >= this.wakeAt) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = next;
    this.wakeTimer = setTimeout(() => {
      this.wakeAt = Infinity;
      this.wakeTimer = undefined;
      this.pump();
    }, next - now);
    this.wakeTimer.unref();
  }
}

/** A model endpoint: one URL or a list of replicas, with the per-endpoint cap on each. */
export interface ModelEndpoint {
  /** The request URL of each replica, in the config's order. */
  readonly urls: readonly string[];
  /** Runs `call` with the URL of the replica it goes to. */
  run<T>(call: (url: string) => Promise<T>, opts?: RunOptions): Promise<T>;
}

const pools = new Map<string, ReplicaPool>();

/**
 * The endpoint serving `path` on `bases`. One base keeps the plain per-endpoint limiter; a list
 * shares one pool per list of origins in this process, so chunks running side by side share its caps.
 */
export function modelEndpoint(
  bases: string | readonly string[],
  path: string,
  cap: number,
  bench?: BenchPolicy,
): ModelEndpoint {
  const list = typeof bases === 'string' ? [bases] : bases;
  const urls = list.map((base) => new URL(path, base).toString());
  if (urls.length === 1) {
    const url = urls[0]!;
    const limiter = endpointLimiter(url, cap);
    return { urls, run: (call, opts = {}) => limiter.run(() => call(url), opts.rank) };
  }
  const origins = urls.map(originLabel);
  const key = origins.join(' ');
  let pool = pools.get(key);
  if (!pool) {
    pool = new ReplicaPool(origins, cap, bench);
    pools.set(key, pool);
  } else {
    pool.setLimit(cap, bench);
  }
  const replicas = pool;
  return { urls, run: (call, opts) => replicas.run((replica) => call(urls[replica]!), opts) };
}

/** Every replica of every replicated endpoint this process has used, for the worker's metrics. */
export function replicaStats(): ReplicaStats[] {
  return [...pools.values()].flatMap((pool) => pool.stats());
}
