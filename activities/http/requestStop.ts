// What stops one request: its timeout, or the caller's signal (the activity's cancellation). One
// per request, in place of an AbortController of its own, whose signal would cost the request an
// EventTarget and a listener on it besides the one on the caller's signal.

type AbortRequest = (reason?: Error) => void;

export class RequestStop {
  private stopped = false;
  /** undici takes an Error, or none for its own abort error. */
  private reason: Error | undefined;
  private abortRequest: AbortRequest | undefined;

  /** Stops the request with `reason`: at once when it is connected, else as soon as it is. */
  stop(reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reason = reason instanceof Error ? reason : undefined;
    this.abortRequest?.(this.reason);
  }

  /** undici's onConnect: aborts a request stopped before it connected, else keeps its abort. */
  connected(abortRequest: AbortRequest): void {
    if (this.stopped) abortRequest(this.reason);
    else this.abortRequest = abortRequest;
  }

  /** Once the request answered or failed: a later stop has nothing to abort. */
  settled(): void {
    this.abortRequest = undefined;
  }
}
