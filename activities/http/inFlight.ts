// Requests in flight per endpoint, for the worker's Prometheus gauge (workers/metrics.ts samples
// them). Nothing is counted until a worker turns metrics on, so without them a request pays one
// boolean test; with them, one map lookup and two integer updates, never a metric call.

export interface EndpointInFlight {
  /** scheme://host:port/path: never credentials or a query string, which may carry keys. */
  readonly endpoint: string;
  count: number;
}

let counting = false;
const byUrl = new Map<string, EndpointInFlight>();
const byEndpoint = new Map<string, EndpointInFlight>();

export function countRequestsInFlight(): void {
  counting = true;
}

export function endpointLabel(url: string): string {
  return `${originLabel(url)}${new URL(url).pathname}`;
}

/** scheme://host:port of `url`, the port spelled out: what names one engine replica. */
export function originLabel(url: string): string {
  const { protocol, hostname, port } = new URL(url);
  return `${protocol}//${hostname}:${port || (protocol === 'https:' ? '443' : '80')}`;
}

/** What a request to `url` counts itself in while it is in flight; undefined while counting is off. */
export function inFlightCount(url: string): EndpointInFlight | undefined {
  if (!counting) return undefined;
  let entry = byUrl.get(url);
  if (!entry) {
    // URLs that differ only in what the label leaves out share one count.
    const endpoint = endpointLabel(url);
    entry = byEndpoint.get(endpoint) ?? { endpoint, count: 0 };
    byEndpoint.set(endpoint, entry);
    byUrl.set(url, entry);
  }
  return entry;
}

/** Every endpoint requested since counting began, with its requests in flight now. */
export function requestsInFlight(): Iterable<Readonly<EndpointInFlight>> {
  return byEndpoint.values();
}
