import { log } from '@temporalio/workflow';

// Collect tells the early local profiling (workflows/prefetchLocalProfile.ts) how far its chunks
// have all finished. One signal in flight at a time, carrying the newest prefix when it goes, so a
// burst of finished chunks costs one signal, not one each.

export class ChunkNotifier {
  private readonly finished = new Set<number>();
  private sending: Promise<void> | undefined;

  /** Every chunk below `prefix` has finished (a continued-as-new run starts that way). */
  constructor(
    private prefix: number,
    private readonly send: (chunks: number, final: boolean) => Promise<void>,
    private sent = 0,
  ) {}

  chunkFinished(chunkIndex: number): void {
    this.finished.add(chunkIndex);
    while (this.finished.delete(this.prefix)) this.prefix++;
    this.pump();
  }

  /** Waits for the signal in flight, and those it leaves to send. */
  async drain(): Promise<void> {
    while (this.sending) await this.sending;
  }

  /** Every chunk has finished: the last signal says so. */
  async finish(chunks: number): Promise<void> {
    await this.drain();
    await this.deliver(chunks, true);
  }

  private pump(): void {
    if (this.sending || this.prefix <= this.sent) return;
    const chunks = this.prefix;
    this.sent = chunks;
    this.sending = this.deliver(chunks, false).then(() => {
      this.sending = undefined;
      this.pump();
    });
  }

  /**
   * Early profiling only saves time; a signal it cannot take (it ended, or was never started) must
   * not fail the collect, so the failure is logged and collect goes on.
   */
  private async deliver(chunks: number, final: boolean): Promise<void> {
    try {
      await this.send(chunks, final);
    } catch (err) {
      log.warn('early local profiling did not take the finished chunks', { chunks, final, error: String(err) });
    }
  }
}
