import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { METRICS_ADDRESS_ENV, metricsBindAddress } from '../../workers/metrics';

// Where the worker's metrics exporter binds, from its flags and the environment. The exporter itself
// is tested in worker processes: metricsRun.test.ts and metricsExporter.test.ts.

describe('metricsBindAddress', () => {
  test('off unless a flag or the variable asks for it', () => {
    assert.equal(metricsBindAddress({}, {}), undefined);
    assert.equal(metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: '  ' }), undefined);
  });

  test('--metrics-port binds loopback unless --metrics-host says otherwise; flags win over the variable', () => {
    const env = { [METRICS_ADDRESS_ENV]: '0.0.0.0:9000' };
    assert.equal(metricsBindAddress({ metricsPort: '9464' }, env), '127.0.0.1:9464');
    assert.equal(metricsBindAddress({ metricsPort: '9464', metricsHost: '0.0.0.0' }, env), '0.0.0.0:9464');
    assert.equal(metricsBindAddress({ metricsPort: 9464, metricsHost: '::1' }, {}), '[::1]:9464');
    assert.equal(metricsBindAddress({}, env), '0.0.0.0:9000');
    assert.equal(metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: '[::]:9464' }), '[::]:9464');
  });

  test('refuses what the exporter cannot bind, naming the setting', () => {
    assert.throws(() => metricsBindAddress({ metricsPort: 'http' }, {}), /--metrics-port: http is not a port/);
    assert.throws(() => metricsBindAddress({ metricsPort: '70000' }, {}), /--metrics-port/);
    assert.throws(
      () => metricsBindAddress({ metricsPort: '9464', metricsHost: 'localhost' }, {}),
      /--metrics-host: localhost is not an IP address/,
    );
    assert.throws(() => metricsBindAddress({ metricsHost: '0.0.0.0' }, {}), /--metrics-host needs --metrics-port/);
    assert.throws(
      () => metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: '9464' }),
      new RegExp(`${METRICS_ADDRESS_ENV}: 9464: expected ip:port`),
    );
    assert.throws(() => metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: 'localhost:9464' }), /not an IP address/);
  });
});
