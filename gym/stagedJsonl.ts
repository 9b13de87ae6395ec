import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { renameDurably } from './durable';
import { namedFileError, onFile } from './fileError';

/**
 * A JSONL file written beside its target (`<path>.tmp`) and renamed into place, durably, once
 * complete: a crash or a full disk leaves the published file as it was, never half written.
 */
export class StagedJsonlFile {
  readonly tmpPath: string;
  private readonly stream: WriteStream;
  private failure: Error | undefined;
  private committed = false;

  constructor(readonly path: string) {
    this.tmpPath = `${path}.tmp`;
    this.stream = createWriteStream(this.tmpPath);
    // Kept and thrown by the next call: an 'error' event nobody listens to would end the worker.
    this.stream.on('error', (err) => {
      this.failure ??= namedFileError(err, this.tmpPath);
    });
  }

  /** A line already serialized, `\n` included. */
  async writeLine(text: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.stream.write(text)) await onFile(this.tmpPath, () => once(this.stream, 'drain'));
  }

  async commit(): Promise<void> {
    this.stream.end();
    await onFile(this.tmpPath, () => finished(this.stream));
    await renameDurably([[this.tmpPath, this.path]]);
    this.committed = true;
  }

  /** Drops the temporary file, unless the file was committed. */
  async abort(): Promise<void> {
    if (this.committed) return;
    this.stream.destroy();
    await rm(this.tmpPath, { force: true });
  }
}
