// What the side-by-side walk over two `arguments` texts (argumentPair.ts) returns for each value,
// and what comparing two objects on that walk (objectPair.ts) needs from it. The two recurse into
// each other, so this is the part both of them share.
import type { ArgumentMismatch } from './categories';

// Walk results: MATCH, a mismatch category, or STOP once a text turned out invalid or a shape
// needs the decoding path, with the reason recorded by the walk. All of them strings: V8 compares
// two literal strings by identity, but a comparison that has met both null and strings calls a
// builtin each time, and the walk compares a result after every value.
export const MATCH = 'MATCH';
export const STOP = 'STOP';
export type Step = ArgumentMismatch | typeof MATCH | typeof STOP;

/** The two texts with a cursor into each, both at the same point of the comparison. */
export interface PairWalk {
  readonly expected: string;
  readonly actual: string;
  e: number;
  a: number;
  /** Both cursors are at a value, whose first code units are `open` and `other`: compares the two
   * and moves past them. */
  value(depth: number, open: number, other: number): Step;
  /** Moves past both values once their comparison no longer matters or cannot be made in place. */
  skipBoth(step: ArgumentMismatch, depth: number): Step;
  undecided(): typeof STOP;
  actualInvalid(): typeof STOP;
}
