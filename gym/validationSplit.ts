import { createHash } from 'node:crypto';

// Train/validation split by source trajectory. Pivots cut from one trajectory share their prefix
// (a later pivot's input holds the earlier pivots' expected actions), so a split by row leaks the
// answer; whole trajectories go to one side instead. A trajectory is its source file, task index
// and rollout index. Convert keeps a pivot met in several trajectories once, under the first, so
// trajectories that share a pivot are joined into one group and go to the same side too.
//
// A group's side is a hash of the seed and the group's smallest key, never of the order anything
// arrived in, and a trajectory keeps its side as other trajectories come and go.

export const SPLITS = ['train', 'validation'] as const;
export type Split = (typeof SPLITS)[number];

export interface TrajectoryRef {
  source_file: string;
  task_index: number;
  rollout_index: number;
}

export interface SplitOptions {
  /** Expected share of trajectory groups on the validation side, in [0, 0.5]. */
  fraction: number;
  seed: number;
}

export function trajectoryKey(t: TrajectoryRef): string {
  return JSON.stringify([t.source_file, t.task_index, t.rollout_index]);
}

const HASH_BITS = 52;

/** A uniform number in [0, 1) from the seed and a group's key. */
function unitHash(seed: number, key: string): number {
  const hex = createHash('sha256').update(`pivot-miner validation split\0${seed}\0${key}`).digest('hex');
  return parseInt(hex.slice(0, HASH_BITS / 4), 16) / 2 ** HASH_BITS;
}

export class ValidationSplit {
  /** Union-find over trajectory keys; a group's root is its smallest key. */
  private readonly parent = new Map<string, string>();

  constructor(private readonly options: SplitOptions) {}

  /** Puts two trajectories (e.g. a kept pivot's and its duplicate's) on the same side. */
  join(a: TrajectoryRef, b: TrajectoryRef): void {
    const rootA = this.root(trajectoryKey(a));
    const rootB = this.root(trajectoryKey(b));
    if (rootA === rootB) return;
    if (rootA < rootB) this.parent.set(rootB, rootA);
    else this.parent.set(rootA, rootB);
  }

  splitOf(t: TrajectoryRef): Split {
    return unitHash(this.options.seed, this.root(trajectoryKey(t))) < this.options.fraction ? 'validation' : 'train';
  }

  private root(key: string): string {
    let root = key;
    for (let up = this.parent.get(root); up !== undefined; up = this.parent.get(root)) root = up;
    for (let node = key; node !== root;) {
      const up = this.parent.get(node)!;
      this.parent.set(node, root);
      node = up;
    }
    return root;
  }
}
