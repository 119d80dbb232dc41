import type { CrmConnector, CrmEnvironment } from '../crm/connector.js';
import type { Installation, InstallationStore } from '../installations/store.js';
import { FixtureWriteRefusedError } from '../pipeline/errors.js';
import { providerFor } from '../providers.js';
import type { ReportClient } from '../reports/client.js';
import { guardDataWrites } from './data-write-guard.js';

/**
 * Fixture scores never reach a production CRM by accident. A sandbox report-service key (`me { sandbox }`)
 * reads the service's fixture data; the CRM says whether it is a test portal / sandbox org or production. With
 * a sandbox key on a production CRM every record write (and alert activity) is refused, the refusal is kept on
 * the installation for the admin page and `status`, and the run stops saying why, until an operator allows
 * fixture writes for that installation. Nothing is asked of the CRM while the key is a real one.
 */

/** The reason writes are refused, or null when they may go ahead. */
export type FixtureCheck = () => Promise<string | null>;

/** `connector` with its data writes behind `check`; everything else (reads, field setup) passes through. */
export function guardFixtureWrites<C extends CrmConnector>(
  connector: C,
  installationId: string,
  check: FixtureCheck,
): C {
  return guardDataWrites(connector, async () => {
    const refusal = await check();
    return refusal ? new FixtureWriteRefusedError(refusal, installationId) : null;
  });
}

export interface FixtureGuardDeps {
  installations: InstallationStore;
}

/**
 * Remembers, per process, what each report key and each installation's CRM is (one `me` call per key, one
 * CRM call per installation), and answers the check for one installation.
 */
export class FixtureGuard {
  private readonly keySandbox = new Map<string, Promise<boolean>>();
  private readonly environments = new Map<string, Promise<CrmEnvironment>>();

  constructor(private readonly deps: FixtureGuardDeps) {}

  check(
    installation: Installation,
    keyId: string,
    client: ReportClient,
    connector: CrmConnector,
  ): FixtureCheck {
    return async () => {
      if (!(await this.isSandboxKey(installation, keyId, client))) return null;
      const current = await this.deps.installations.get(installation.id);
      if (current?.allowFixtureWrites) return null;
      if ((await this.environment(installation.id, connector)) === 'test') return null;
      const provider = providerFor(installation.crm);
      const reason =
        `fixture scores refused: the report-service key is a sandbox key (fixture data) and this ${provider.label} ` +
        `${provider.accountNoun} is a production one; connect a real key, or allow fixture writes for this installation ` +
        'on the admin page if that is intended';
      if (current?.fixtureRefusal !== reason)
        await this.deps.installations.setFixtureRefusal(installation.id, reason);
      return reason;
    };
  }

  /** Forgets what it learned of an installation (its key or its CRM may have changed). */
  forget(installationId: string): void {
    this.environments.delete(installationId);
  }

  private isSandboxKey(installation: Installation, keyId: string, client: ReportClient): Promise<boolean> {
    // A key of the installation's own was asked when it was saved.
    if (installation.hasReportsApiKey && installation.reportsKeySandbox !== undefined) {
      return Promise.resolve(installation.reportsKeySandbox);
    }
    return this.remember(this.keySandbox, keyId, async () => (await client.me()).sandbox);
  }

  private environment(installationId: string, connector: CrmConnector): Promise<CrmEnvironment> {
    return this.remember(this.environments, installationId, () => connector.environment());
  }

  /** A failed lookup is not remembered: the next write asks again. */
  private remember<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
    let pending = cache.get(key);
    if (!pending) {
      pending = load();
      cache.set(key, pending);
      pending.catch(() => cache.delete(key));
    }
    return pending;
  }
}
