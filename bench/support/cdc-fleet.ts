import { salesforceField } from '../../connectors/salesforce/fields/field-names.js';
import { IdFactory, KEY_PREFIX } from '../../connectors/salesforce/local/ids.js';
import type { LocalAccountChange } from '../../connectors/salesforce/local/org.js';
import type { SharedPubSubEndpoint } from '../../connectors/salesforce/local/pubsub-server.js';
import { createLocalSalesforce, type LocalSalesforce } from '../../connectors/salesforce/local/server.js';
import { SALESFORCE_KIND } from '../../connectors/salesforce/provider.js';
import type { SeedCompanyInput } from '../../local/demo-seed.js';
import type { LocalSystem } from '../../local/system.js';
import { InstallationService } from '../../src/app/installation-service.js';

/**
 * Many Salesforce installations on one local system, for the change streams' capacity bench: the system's own
 * org first, then orgs of their own (each with its own id, instance URL and integration user, as separate
 * customers' orgs are), every one on the same Pub/Sub endpoint as Salesforce's one endpoint serves all orgs.
 * Each org starts with Accounts no report matches; a change types a published report's slug on one of them
 * (a new Account once an org has none left), and the connector's write to that Account answers it.
 */

/** Invented names: no report matches them, so every seeded Account ends `no_match`. */
const WORDS = ['Quillfeather', 'Zantrax', 'Morvendale', 'Plinthwick', 'Ostravel', 'Kelderhaus'];

export function unmatchedCompanies(org: number, count: number): SeedCompanyInput[] {
  return Array.from({ length: count }, (_, k) => ({
    name: `${WORDS[k % WORDS.length]} ${org}-${k}`,
    domain: null,
    country: null,
    city: null,
    industry: null,
    slug: null,
    expected: { status: 'no_match' },
  }));
}

export interface FleetOrg {
  index: number;
  sf: LocalSalesforce;
  installationId: string;
  /** Seeded Accounts no change has touched yet. */
  untouched: string[];
  close: () => Promise<void>;
}

export interface FleetChange {
  n: number;
  org: number;
  kind: 'slug' | 'create';
  recordId: string;
  at: number;
  writtenAt?: number;
}

export class CdcFleet {
  readonly orgs: FleetOrg[] = [];
  private readonly orgIds = new IdFactory();
  /** The changes waiting for the connector's write, by `org:recordId` (ids repeat across orgs). */
  private readonly waiting = new Map<string, FleetChange>();

  constructor(
    private readonly system: LocalSystem,
    private readonly endpoint: SharedPubSubEndpoint,
    private readonly accountsPerOrg: number,
  ) {
    const sf = system.salesforce!;
    endpoint.add(sf.pubsub);
    this.watch(0, sf);
    this.orgs.push({
      index: 0,
      sf,
      installationId: system.installationId,
      untouched: [...system.recordIds],
      close: async () => undefined,
    });
  }

  /** Installs orgs up to `count` in all (fields, polling, first sync queued); returns the new installations. */
  async grow(count: number, parallel = 8): Promise<string[]> {
    const added: string[] = [];
    const next = async (): Promise<void> => {
      while (this.orgs.length < count) {
        const index = this.orgs.length;
        const slot: FleetOrg = {
          index,
          sf: createLocalSalesforce({ orgId: this.nextOrgId() }),
          installationId: '',
          untouched: [],
          close: async () => undefined,
        };
        this.orgs.push(slot);
        await this.install(slot);
        added.push(slot.installationId);
      }
    };
    await Promise.all(Array.from({ length: parallel }, next));
    return added;
  }

  /** An org id of the same shape as the system org's, never its. */
  private nextOrgId(): string {
    const id = this.orgIds.next(KEY_PREFIX.organization);
    return id === this.orgs[0]!.sf.orgId ? this.nextOrgId() : id;
  }

  private async install(slot: FleetOrg): Promise<void> {
    const { sf } = slot;
    const listening = await sf.listen(0);
    slot.close = listening.close;
    this.endpoint.add(sf.pubsub);
    this.watch(slot.index, sf);
    const accounts = sf.seedAccounts(
      unmatchedCompanies(slot.index, this.accountsPerOrg).map((c) => ({ Name: c.name })),
    );
    slot.untouched = accounts.map((a) => a.Id);
    const { ctx } = this.system;
    const installation = await ctx.installations.upsert({
      crm: SALESFORCE_KIND,
      externalId: sf.orgId,
      mode: 'token',
      tokens: { accessToken: sf.issueAccessToken() },
      instanceUrl: listening.url,
    });
    slot.installationId = installation.id;
    await new InstallationService(ctx).installed(installation);
  }

  /** The connector's writes (the integration user's updates) answer the changes waiting on those Accounts. */
  private watch(org: number, sf: LocalSalesforce): void {
    sf.org.accountChangeListeners.add((c: LocalAccountChange) => {
      if (c.userId !== sf.integrationUserId || c.changeType !== 'UPDATE') return;
      for (const id of c.ids) {
        const change = this.waiting.get(`${org}:${id}`);
        if (!change) continue;
        change.writtenAt = Date.now();
        this.waiting.delete(`${org}:${id}`);
      }
    });
  }

  /** Streams open on the endpoint: subscriptions that asked for events, over every org. */
  openStreams(): number {
    return this.orgs.reduce((sum, o) => sum + o.sf.pubsub.openStreams(), 0);
  }

  /** Change `n` in org `org`: a person types `slug` on an untouched Account, or creates one named `name`. */
  change(n: number, org: number, slug: string, name: string): FleetChange {
    const { sf, untouched } = this.orgs[org]!;
    const id = untouched.shift();
    const at = Date.now();
    let change: FleetChange;
    if (id) {
      change = { n, org, kind: 'slug', recordId: id, at };
      this.waiting.set(`${org}:${id}`, change);
      sf.updateAccountAsPerson(id, { [salesforceField('slug').salesforce]: slug });
    } else {
      // Seeded first, then waited on: the write cannot come before the creation's event is out.
      const [account] = sf.seedAccounts([{ Name: name }]);
      change = { n, org, kind: 'create', recordId: account!.Id, at };
      this.waiting.set(`${org}:${account!.Id}`, change);
    }
    return change;
  }

  /** Requests per route summed over the orgs (`queryAll` counts the change polls, catch-ups included). */
  counters(): Record<string, number> {
    const sum: Record<string, number> = {};
    for (const o of this.orgs)
      for (const [k, v] of Object.entries(o.sf.counters())) sum[k] = (sum[k] ?? 0) + v;
    return sum;
  }

  /** Pub/Sub calls summed over the orgs. */
  pubsubCounts(): Record<string, number> {
    const sum: Record<string, number> = {};
    for (const o of this.orgs)
      for (const [k, v] of Object.entries(o.sf.pubsub.counts())) sum[k] = (sum[k] ?? 0) + v;
    return sum;
  }

  async close(): Promise<void> {
    await Promise.all(this.orgs.map((o) => o.close()));
  }
}
