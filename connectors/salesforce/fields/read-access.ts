import { z } from 'zod';
import type { ReadAccess } from '../../../src/crm/connector.js';
import type { SalesforceApi } from '../api/api-client.js';
import { soqlIdList } from '../api/soql.js';
import { integrationUserId, isRefusal } from './ensure-fields.js';

/**
 * Whether the integration user can read every Account. With Account's org-wide default Public Read Only or
 * Read/Write everyone can; with Private, only a profile or permission set granting View All on Account (or
 * View All Data) does. Otherwise the backfill lists only the Accounts shared with that user and says nothing:
 * `doctor` warns instead. ObjectPermissions needs "View Setup and Configuration" (since Summer '20); an
 * integration user without it gets "could not check", never a false alarm.
 */

const orgRowSchema = z.object({ DefaultAccountAccess: z.string().nullish() });
const assignmentRowSchema = z.object({ PermissionSetId: z.string() });
const permissionSetRowSchema = z.object({ Id: z.string(), Label: z.string().nullish() });
const objectPermissionRowSchema = z.object({ ParentId: z.string() });
const queryResultSchema = z.object({ records: z.array(z.unknown()) });

/** Org-wide defaults under which every user reads every Account. */
const PUBLIC_ACCOUNT_ACCESS = new Set(['Read', 'Edit', 'ReadEditTransfer', 'All']);

export async function accountReadAccess(api: SalesforceApi): Promise<ReadAccess> {
  const rows = async <T>(schema: z.ZodType<T>, soql: string): Promise<T[]> => {
    const raw = await api.rest<unknown>('urgent', {
      method: 'GET',
      url: `/query?q=${encodeURIComponent(soql)}`,
    });
    return queryResultSchema.parse(raw).records.map((r) => schema.parse(r));
  };
  try {
    const [org] = await rows(orgRowSchema, 'SELECT DefaultAccountAccess FROM Organization');
    const sharing = org?.DefaultAccountAccess ?? null;
    if (sharing && PUBLIC_ACCOUNT_ACCESS.has(sharing)) {
      return { complete: true, detail: `Account's org-wide default is ${sharing}: every Account is visible` };
    }
    const userId = await integrationUserId(api);
    if (typeof userId !== 'string') {
      return { complete: null, detail: `could not tell who the integration user is (${userId.reason})` };
    }
    const granted = (
      await rows(
        assignmentRowSchema,
        `SELECT PermissionSetId FROM PermissionSetAssignment WHERE AssigneeId = '${userId.replace(/'/g, '')}'`,
      )
    ).map((r) => r.PermissionSetId);
    if (granted.length > 0) {
      const allData = await rows(
        permissionSetRowSchema,
        `SELECT Id, Label FROM PermissionSet WHERE PermissionsViewAllData = true AND Id IN ${soqlIdList(granted)}`,
      );
      if (allData.length > 0) {
        return { complete: true, detail: `View All Data (${allData[0]?.Label ?? allData[0]?.Id})` };
      }
      const viewAll = await rows(
        objectPermissionRowSchema,
        `SELECT ParentId FROM ObjectPermissions WHERE SobjectType = 'Account' AND PermissionsViewAllRecords = true AND ParentId IN ${soqlIdList(granted)}`,
      );
      if (viewAll.length > 0) return { complete: true, detail: 'View All on Account' };
    }
    return {
      complete: false,
      detail: `Account's org-wide default is ${sharing ?? 'private'} and the integration user has neither View All on Account nor View All Data: the backfill sees only the Accounts shared with it`,
    };
  } catch (err) {
    if (!isRefusal(err)) throw err;
    return {
      complete: null,
      detail: `could not check (${err.message}); reading permissions needs View Setup and Configuration`,
    };
  }
}
