import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

// A throw-away certificate authority made with openssl at test time, and leaves it signs. rustls (the
// worker's and the Python SDK's TLS) refuses a self-signed certificate as a leaf, so a CA signs them.

export interface Leaf {
  /** Files are `<name>.pem` and `<name>.key`. */
  name: string;
  /** Common name and DNS subject alternative name. */
  cn: string;
  usage: 'serverAuth' | 'clientAuth';
}

/** Writes `ca.pem`/`ca.key` and each leaf's `<name>.pem`/`<name>.key` into `dir`. */
export function makeTestCa(dir: string, leaves: Leaf[]): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-subj',
    '/CN=pivot-miner test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
  for (const { name, cn, usage } of leaves) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${cn}`,
    );
    writeFileSync(
      path.join(dir, `${name}.ext`),
      `basicConstraints=CA:FALSE\nsubjectAltName=DNS:${cn}\nextendedKeyUsage=${usage}\n`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    );
  }
}
