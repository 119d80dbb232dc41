import { describe, expect, it } from 'vitest';
import { suiteSystem } from './support/local-system.js';

/**
 * suiteSystem stands for a system started in beforeAll: read through it, the tests see that system itself
 * (properties, getters, methods), and a read before the start says so instead of giving undefined.
 */

let readBeforeStart: unknown;
const system = suiteSystem({ companies: 1, firstSync: false, logLevel: 'silent' });
try {
  void system.appUrl;
} catch (error) {
  readBeforeStart = error;
}

describe('a suite system', () => {
  it('refuses a read before its start', () => {
    expect(String(readBeforeStart)).toMatch(/read outside its tests/);
  });

  it('reads as the started system: fields, getters, methods and keys', async () => {
    expect(system.appUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(system.hubspotUrl).toBe(system.crmUrl);
    expect('ctx' in system).toBe(true);
    expect(Object.keys(system)).toEqual(expect.arrayContaining(['ctx', 'installationId', 'recordIds']));
    expect({ ...system }.installationId).toBe(system.installationId);
    const installation = await system.ctx.installations.get(system.installationId);
    expect(installation?.id).toBe(system.installationId);
    const health = await fetch(`${system.appUrl}/healthz`);
    expect(health.status).toBe(200);
  });
});
