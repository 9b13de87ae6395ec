/** Runs `request`, then tells `onRequest` when it was in flight, whether it answered or failed. */
export async function timed<T>(
  onRequest: ((startMs: number, endMs: number) => void) | undefined,
  request: () => Promise<T>,
): Promise<T> {
  if (!onRequest) return request();
  const startMs = Date.now();
  try {
    return await request();
  } finally {
    onRequest(startMs, Date.now());
  }
}
