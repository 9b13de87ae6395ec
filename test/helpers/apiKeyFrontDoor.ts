import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

// Temporal's dev server checks no API key, so a test that needs a server which does puts this in
// front of it: a TLS HTTP/2 endpoint that refuses every gRPC call whose `authorization` header is
// not `Bearer <apiKey>` (gRPC status 16, UNAUTHENTICATED, as Temporal Cloud answers) and forwards
// the others, headers, body and trailers, to the dev server.

export interface ApiKeyFrontDoor {
  /** `127.0.0.1:<port>`; clients verify the certificate against the name it was made for. */
  address: string;
  /** Calls forwarded and calls refused so far. */
  counts: { forwarded: number; refused: number };
  close: () => Promise<void>;
}

const UNAUTHENTICATED = '16';
/** Request headers http2 sets itself on the forwarded call. */
const OWN_HEADERS = new Set([':scheme', ':authority']);

export async function startApiKeyFrontDoor(opts: {
  upstream: string;
  apiKey: string;
  key: Buffer;
  cert: Buffer;
}): Promise<ApiKeyFrontDoor> {
  const counts = { forwarded: 0, refused: 0 };
  const upstream = http2.connect(`http://${opts.upstream.replace(/^localhost:/, '127.0.0.1:')}`);
  upstream.on('error', () => undefined);
  const server = http2.createSecureServer({ key: opts.key, cert: opts.cert });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    if (headers.authorization !== `Bearer ${opts.apiKey}`) {
      counts.refused++;
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': UNAUTHENTICATED,
          'grpc-message': 'missing or wrong API key',
        },
        { endStream: true },
      );
      return;
    }
    counts.forwarded++;
    const forwarded = Object.fromEntries(Object.entries(headers).filter(([name]) => !OWN_HEADERS.has(name)));
    const call = upstream.request(forwarded);
    call.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('close', () => call.close());
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('response', (responseHeaders) => {
      // A trailers-only answer (an error, or an empty result) carries grpc-status in its headers.
      if ('grpc-status' in responseHeaders) stream.respond(responseHeaders, { endStream: true });
      else stream.respond(responseHeaders, { waitForTrailers: true });
    });
    call.on('trailers', (received) => (trailers = received));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    stream.pipe(call);
    call.pipe(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: async () => {
      upstream.close();
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
