import { IdFactory } from './ids.js';
import { SalesforceApiError } from './org.js';

/**
 * The org's Change Data Capture selections on the standard `ChangeEvents` channel, as the Tooling API's
 * PlatformEventChannelMember records stand for them (Setup > Change Data Capture edits the same records). The
 * Pub/Sub API publishes Account changes only while AccountChangeEvent is selected. An org at its allocation of
 * selected entities (five without the add-on license) refuses a new selection.
 */

export const STANDARD_CHANNEL = 'ChangeEvents';
const MEMBER_KEY_PREFIX = '0v8';

export interface ChannelMember {
  Id: string;
  DeveloperName: string;
  EventChannel: string;
  SelectedEntity: string;
}

/** The allocation of selected entities without the add-on license (Change Data Capture Allocations). */
export const DEFAULT_SELECTED_ENTITY_LIMIT = 5;

export class ChangeEventSelection {
  private readonly members = new Map<string, ChannelMember>();
  private readonly ids = new IdFactory();

  constructor(
    options: { accountSelected: boolean; entityLimitReached: boolean },
    private readonly canCustomize: () => boolean,
  ) {
    if (options.accountSelected) this.add(STANDARD_CHANNEL, 'AccountChangeEvent');
    // Other objects an admin selected fill the allocation: Account cannot join them.
    if (options.entityLimitReached) {
      for (const entity of ['Contact', 'Lead', 'Opportunity', 'Case', 'Campaign']) {
        if (this.members.size >= DEFAULT_SELECTED_ENTITY_LIMIT) break;
        this.add(STANDARD_CHANNEL, `${entity}ChangeEvent`);
      }
    }
  }

  get accountSelected(): boolean {
    return this.members.has(`${STANDARD_CHANNEL}_AccountChangeEvent`);
  }

  list(): ChannelMember[] {
    return [...this.members.values()];
  }

  /** `POST tooling/sobjects/PlatformEventChannelMember`: `{ FullName, Metadata: { eventChannel, selectedEntity } }`. */
  create(body: unknown): string {
    if (!this.canCustomize()) {
      throw new SalesforceApiError(
        403,
        'INSUFFICIENT_ACCESS_OR_READONLY',
        'insufficient access rights on object id',
      );
    }
    const { FullName, Metadata } = (body ?? {}) as { FullName?: unknown; Metadata?: unknown };
    const { eventChannel, selectedEntity } = (Metadata ?? {}) as Record<string, unknown>;
    if (typeof eventChannel !== 'string' || typeof selectedEntity !== 'string') {
      throw new SalesforceApiError(
        400,
        'REQUIRED_FIELD_MISSING',
        'Required fields are missing: [eventChannel, selectedEntity]',
      );
    }
    if (eventChannel !== STANDARD_CHANNEL) {
      throw new SalesforceApiError(400, 'INVALID_CROSS_REFERENCE_KEY', `no such channel: ${eventChannel}`);
    }
    const name = typeof FullName === 'string' && FullName ? FullName : `${eventChannel}_${selectedEntity}`;
    if (this.members.has(name)) {
      throw new SalesforceApiError(
        400,
        'DUPLICATE_DEVELOPER_NAME',
        `There's already a channel member named ${name}.`,
      );
    }
    if (this.members.size >= DEFAULT_SELECTED_ENTITY_LIMIT) {
      throw new SalesforceApiError(
        400,
        'LIMIT_EXCEEDED',
        `You can select up to ${DEFAULT_SELECTED_ENTITY_LIMIT} entities for Change Data Capture. To select more, purchase the add-on license.`,
      );
    }
    return this.add(eventChannel, selectedEntity, name).Id;
  }

  /**
   * `tooling/query` on PlatformEventChannelMember: every member, or those whose DeveloperName or SelectedEntity is
   * the one quoted value (the only filters the connector sends).
   */
  query(soql: string): { totalSize: number; done: true; records: ChannelMember[] } {
    if (!/\bFROM\s+PlatformEventChannelMember\b/i.test(soql)) {
      throw new SalesforceApiError(
        400,
        'INVALID_TYPE',
        'the local Tooling API only answers PlatformEventChannelMember',
      );
    }
    const where = /\bWHERE\s+(DeveloperName|SelectedEntity)\s*=\s*'([^']*)'/i.exec(soql);
    const records = this.list().filter(
      (m) =>
        !where ||
        (where[1]!.toLowerCase() === 'developername' ? m.DeveloperName : m.SelectedEntity) === where[2],
    );
    return { totalSize: records.length, done: true, records };
  }

  private add(channel: string, entity: string, name = `${channel}_${entity}`): ChannelMember {
    const member = {
      Id: this.ids.next(MEMBER_KEY_PREFIX),
      DeveloperName: name,
      EventChannel: channel,
      SelectedEntity: entity,
    };
    this.members.set(name, member);
    return member;
  }
}
