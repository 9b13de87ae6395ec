// What a reward profile reads (materialized input rows and rollout results, each with its key) and,
// for profiling in key order (stream.ts), cursors over them that stop with NotInKeyOrder at the first
// key not strictly after the one before.

type Row = Record<string, unknown>;

/** One rollout result: its key, its fields (decoded line, or the part profiling reads) and the text its numbers' kinds are read from. */
export interface ProfiledResult {
  task: number;
  rollout: number;
  result: Row;
  text: string;
}

/** One materialized input row: its key, its agent and where its line is (for `sample`). */
export interface ProfiledInput {
  task: number;
  rollout: number;
  agentName: string;
  /** The row's `_ng_environment_server` stamp, when it has one. */
  environmentServer?: string;
  byteOffset: number;
  byteLength: number;
}

/** Where the inputs and results are read from, as many times as profiling needs. */
export interface ProfileSources {
  results(): AsyncIterable<ProfiledResult>;
  inputs(): AsyncIterable<ProfiledInput>;
}

export class NotInKeyOrder extends Error {
  constructor(what: string) {
    super(`${what} are not in strictly increasing key order`);
    this.name = 'NotInKeyOrder';
  }
}

export interface Keyed {
  task: number;
  rollout: number;
}

export const compareKeys = (a: Keyed, b: Keyed) => a.task - b.task || a.rollout - b.rollout;
export const keyText = (k: Keyed) => `(${k.task}, ${k.rollout})`;

/** An async iterator one item ahead, refusing items that do not come strictly after the one before. */
class Cursor<T extends Keyed> {
  current: T | undefined;
  position = -1;
  private readonly iterator: AsyncIterator<T>;

  constructor(
    source: AsyncIterable<T>,
    private readonly what: string,
  ) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  async advance(): Promise<void> {
    const previous = this.current;
    const next = await this.iterator.next();
    this.current = next.done ? undefined : next.value;
    this.position++;
    if (previous && this.current && compareKeys(previous, this.current) >= 0) throw new NotInKeyOrder(this.what);
  }

  /** Ends the source early, so a file it reads is closed now rather than when its handle is collected. */
  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

interface Cursors {
  inputs: Cursor<ProfiledInput>;
  results: Cursor<ProfiledResult>;
  close(): Promise<void>;
}

/**
 * Both sources as cursors, which the caller closes in a `finally`: a read that stops early
 * (NotInKeyOrder on rollouts in completion order, as NeMo Gym writes them, or an error) would
 * otherwise leave each source's file open until its handle is garbage collected.
 */
export async function openCursors(sources: ProfileSources): Promise<Cursors> {
  const inputs = new Cursor(sources.inputs(), 'materialized input rows');
  const results = new Cursor(sources.results(), 'rollout results');
  const close = async () => {
    await inputs.close();
    await results.close();
  };
  try {
    await inputs.advance();
    await results.advance();
  } catch (err) {
    await close();
    throw err;
  }
  return { inputs, results, close };
}
