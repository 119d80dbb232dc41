import type { CrmConnector, PolledCrmConnector } from '../crm/connector.js';
import type { Installation } from '../installations/store.js';
import type { ReportClient } from '../reports/client.js';

/** Opens an installation for work: its CRM connector and a report client with its own key and pace. */
export interface InstallationHandle {
  installation: Installation;
  connector: CrmConnector | PolledCrmConnector;
  client: ReportClient;
}

export interface OpenOptions {
  urgent?: boolean;
  /**
   * With `urgent`: a storm's coalesced updates. They go ahead of deferrable work on the rate gates and behind
   * other urgent work (a single change, a person's action), which they never hold up (ratelimit/redis-gate.ts).
   */
  hot?: boolean;
  /**
   * For a preview: a pending installation opens too (an operator asked to see what its first write would
   * do), and the connector refuses every write (PreviewWriteError).
   */
  preview?: boolean;
}

export interface InstallationRuntime {
  /** Throws NoReportKeyError, InstallationNotFoundError or a CRM error for a disconnected installation. */
  open(installationId: string, options?: OpenOptions): Promise<InstallationHandle>;
  /** A report client for checking a key before it is stored (admin page, doctor). */
  clientForKey(apiKey: string, urgent?: boolean): ReportClient;
}

export function isPolled(connector: CrmConnector): connector is PolledCrmConnector {
  return typeof (connector as Partial<PolledCrmConnector>).listChangedSince === 'function';
}
