import { XMLParser } from 'fast-xml-parser';
import type { CustomFieldDef, CustomFieldType, LocalOrg, RecordFailure } from './org.js';

/**
 * The Metadata API SOAP calls the connector makes (`upsertMetadata` for CustomField and PermissionSet,
 * `readMetadata` for CustomField), answered in the envelope shape jsforce parses. Test tool only.
 */

const parser = new XMLParser({
  ignoreAttributes: false,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => ['metadata', 'fullNames', 'fieldPermissions', 'objectPermissions'].includes(name),
});

type Node = Record<string, unknown>;

export interface SoapCall {
  sessionId: string | undefined;
  method: string;
  args: Node;
}

function obj(value: unknown): Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Node) : {};
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const t = obj(value)['#text'];
  return typeof t === 'string' ? t : undefined;
}

function num(value: unknown): number | undefined {
  const t = text(value);
  return t === undefined || t === '' ? undefined : Number(t);
}

function bool(value: unknown): boolean {
  return text(value) === 'true';
}

export function parseSoapCall(xml: string): SoapCall {
  const doc = obj(parser.parse(xml));
  const envelope = obj(doc.Envelope);
  const header = obj(envelope.Header);
  const body = obj(envelope.Body);
  const [method, args] = Object.entries(body).find(([k]) => !k.startsWith('@_')) ?? ['', {}];
  return { sessionId: text(obj(header.SessionHeader).sessionId), method, args: obj(args) };
}

export function escapeXml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

export function soapEnvelope(body: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    'xmlns="http://soap.sforce.com/2006/04/metadata" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
    `<soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`
  );
}

export function soapFault(code: string, message: string): string {
  return soapEnvelope(
    `<soapenv:Fault><faultcode>sf:${escapeXml(code)}</faultcode><faultstring>${escapeXml(`${code}: ${message}`)}</faultstring></soapenv:Fault>`,
  );
}

function saveResult(fullName: string, outcome: { created: boolean } | { failure: RecordFailure }): string {
  if ('failure' in outcome) {
    return (
      `<result><created>false</created><errors><message>${escapeXml(outcome.failure.message)}</message>` +
      `<statusCode>${escapeXml(outcome.failure.statusCode)}</statusCode></errors>` +
      `<fullName>${escapeXml(fullName)}</fullName><success>false</success></result>`
    );
  }
  return `<result><created>${outcome.created}</created><fullName>${escapeXml(fullName)}</fullName><success>true</success></result>`;
}

function customFieldFrom(node: Node): CustomFieldDef {
  const def: CustomFieldDef = {
    fullName: text(node.fullName) ?? '',
    label: text(node.label) ?? '',
    type: (text(node.type) ?? '') as CustomFieldType,
  };
  const length = num(node.length);
  const precision = num(node.precision);
  const scale = num(node.scale);
  const visibleLines = num(node.visibleLines);
  if (length !== undefined) def.length = length;
  if (precision !== undefined) def.precision = precision;
  if (scale !== undefined) def.scale = scale;
  if (visibleLines !== undefined) def.visibleLines = visibleLines;
  const description = text(node.description);
  if (description !== undefined) def.description = description;
  return def;
}

function permissionSetXml(ps: NonNullable<ReturnType<LocalOrg['readPermissionSet']>>): string {
  const fields = ps.fieldPermissions.map(
    (p) =>
      `<fieldPermissions><editable>${p.editable}</editable><field>${escapeXml(p.field)}</field>` +
      `<readable>${p.readable}</readable></fieldPermissions>`,
  );
  const objects = ps.objectPermissions.map(
    (o) =>
      `<objectPermissions><allowCreate>${o.allowCreate}</allowCreate><allowDelete>${o.allowDelete}</allowDelete>` +
      `<allowEdit>${o.allowEdit}</allowEdit><allowRead>${o.allowRead}</allowRead>` +
      `<modifyAllRecords>${o.modifyAllRecords}</modifyAllRecords><object>${escapeXml(o.object)}</object>` +
      `<viewAllRecords>${o.viewAllRecords}</viewAllRecords></objectPermissions>`,
  );
  return (
    `<records xsi:type="PermissionSet">${fields.join('')}<fullName>${escapeXml(ps.fullName)}</fullName>` +
    `<label>${escapeXml(ps.label)}</label>${objects.join('')}</records>`
  );
}

function customFieldXml(def: CustomFieldDef): string {
  const parts = [
    `<fullName>${escapeXml(def.fullName)}</fullName>`,
    def.description !== undefined ? `<description>${escapeXml(def.description)}</description>` : '',
    `<label>${escapeXml(def.label)}</label>`,
    def.length !== undefined ? `<length>${def.length}</length>` : '',
    def.precision !== undefined ? `<precision>${def.precision}</precision>` : '',
    def.scale !== undefined ? `<scale>${def.scale}</scale>` : '',
    `<type>${escapeXml(def.type)}</type>`,
    def.visibleLines !== undefined ? `<visibleLines>${def.visibleLines}</visibleLines>` : '',
  ];
  return `<records xsi:type="CustomField">${parts.join('')}</records>`;
}

/** The SOAP body for one call, or a fault `{ code, message }`. */
export function runMetadataCall(
  org: LocalOrg,
  call: SoapCall,
): { body: string } | { fault: { code: string; message: string } } {
  switch (call.method) {
    case 'upsertMetadata': {
      if (!org.options.canModifyMetadata) {
        return { fault: { code: 'INSUFFICIENT_ACCESS', message: 'insufficient access rights on object id' } };
      }
      const items = (call.args.metadata as unknown[] | undefined) ?? [];
      if (items.length > 10) {
        return { fault: { code: 'INVALID_REQUEST', message: 'more than 10 components in one call' } };
      }
      const results = items.map((raw) => {
        const node = obj(raw);
        const type = text(node['@_type']);
        const fullName = text(node.fullName) ?? '';
        if (type === 'CustomField') return saveResult(fullName, org.upsertCustomField(customFieldFrom(node)));
        if (type === 'PermissionSet') {
          const permissions = ((node.fieldPermissions as unknown[] | undefined) ?? []).map((p) => ({
            field: text(obj(p).field) ?? '',
            readable: bool(obj(p).readable),
            editable: bool(obj(p).editable),
          }));
          const objects = ((node.objectPermissions as unknown[] | undefined) ?? []).map((raw) => {
            const o = obj(raw);
            return {
              object: text(o.object) ?? '',
              allowCreate: bool(o.allowCreate),
              allowDelete: bool(o.allowDelete),
              allowEdit: bool(o.allowEdit),
              allowRead: bool(o.allowRead),
              modifyAllRecords: bool(o.modifyAllRecords),
              viewAllRecords: bool(o.viewAllRecords),
            };
          });
          return saveResult(
            fullName,
            org.upsertPermissionSet({
              fullName,
              label: text(node.label) ?? '',
              fieldPermissions: permissions,
              objectPermissions: objects,
            }),
          );
        }
        return saveResult(fullName, {
          failure: {
            statusCode: 'INVALID_TYPE',
            message: `the local Salesforce does not store ${type ?? 'untyped'} metadata`,
            fields: [],
          },
        });
      });
      return { body: `<upsertMetadataResponse>${results.join('')}</upsertMetadataResponse>` };
    }
    case 'readMetadata': {
      const type = text(call.args.type);
      const names = ((call.args.fullNames as unknown[] | undefined) ?? []).map((n) => text(n) ?? '');
      if (names.length > 10)
        return { fault: { code: 'INVALID_REQUEST', message: 'more than 10 components in one call' } };
      if (type === 'PermissionSet') {
        const sets = names.map((n) => org.readPermissionSet(n)).filter((ps) => ps !== undefined);
        return {
          body: `<readMetadataResponse><result>${sets.map(permissionSetXml).join('')}</result></readMetadataResponse>`,
        };
      }
      if (type !== 'CustomField')
        return { body: '<readMetadataResponse><result></result></readMetadataResponse>' };
      const records = names
        .map((n) => org.readCustomField(n))
        .filter((d): d is CustomFieldDef => d !== undefined)
        .map(customFieldXml);
      return { body: `<readMetadataResponse><result>${records.join('')}</result></readMetadataResponse>` };
    }
    default:
      return {
        fault: {
          code: 'UNKNOWN_EXCEPTION',
          message: `the local Salesforce does not implement ${call.method}`,
        },
      };
  }
}
