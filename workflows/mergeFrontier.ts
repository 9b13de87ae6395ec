import type { MergeProgress } from '../contracts/payloads';

// Chunks finish in any order, while the merged files grow in chunk order. The frontier keeps the
// finished chunks that are not merged yet and runs one merge at a time over those that follow the
// merged ones, so merging keeps pace with the chunk phase and only a tail is left after it.

export class MergeFrontier {
  private readonly finished = new Set<number>();
  private running: Promise<void> | undefined;
  private holding = false;

  /** Every chunk below `finishedBefore` has finished (a continued-as-new run starts that way). */
  constructor(
    private progress: MergeProgress,
    finishedBefore: number,
    private readonly merge: (from: MergeProgress, to: number) => Promise<MergeProgress>,
  ) {
    for (let chunk = progress.chunks; chunk < finishedBefore; chunk++) this.finished.add(chunk);
    this.advance();
  }

  chunkFinished(chunkIndex: number): void {
    this.finished.add(chunkIndex);
    this.advance();
  }

  /** The merge in flight, to wait on beside the chunks: its failure is the stage's failure. */
  get pending(): Promise<void> | undefined {
    return this.running;
  }

  /**
   * Starts no further merges: a run about to continue as new keeps its history bound, and a run at
   * its last chunk leaves the rest to the merge that finishes the stage.
   */
  hold(): void {
    this.holding = true;
  }

  /** What is merged once the merge in flight is done; no further merge starts. */
  async drain(): Promise<MergeProgress> {
    this.hold();
    await this.running;
    return this.progress;
  }

  private advance(): void {
    if (this.running || this.holding) return;
    let to = this.progress.chunks;
    while (this.finished.delete(to)) to++;
    if (to === this.progress.chunks) return;
    this.running = this.merge(this.progress, to).then((progress) => {
      this.progress = progress;
      this.running = undefined;
      this.advance();
    });
  }
}
