import { readFileSync } from 'node:fs';
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on the port: how we tell a server is up, or gone. */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The kernel's range for ports bound as port 0 (Linux; its documented default elsewhere). */
export function ephemeralPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low!, high: high! };
  } catch {
    // Not Linux: fall through to the default.
  }
  return { low: 32768, high: 60999 };
}

/**
 * A port in [low, high] that was free a moment ago, picked at random. For a server that binds only
 * seconds after its port is chosen: a port from freePort() comes from the ephemeral range, where any
 * process that binds port 0 in those seconds may get it first.
 */
export async function freePortInRange(low: number, high: number, attempts = 50): Promise<number> {
  for (let i = 0; i < attempts; i++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${low}-${high} after ${attempts} tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
