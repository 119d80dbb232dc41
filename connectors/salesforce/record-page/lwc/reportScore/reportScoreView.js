/**
 * What the report component shows for one Account, from the connector's Report_* fields as Lightning Data
 * Service returns them. Pure functions of the record and the component's settings, so each state's words live
 * in one place; reportScore.js only wires the record in and the template only lays the words out.
 */

/** The fields the component reads (optional: a user without access to one simply gets no value for it). */
export const REPORT_FIELDS = [
  'Account.Report_Match_Status__c',
  'Account.Report_Slug__c',
  'Account.Report_Score__c',
  'Account.Report_Band__c',
  'Account.Report_Scored_At__c',
  'Account.Report_Pillars__c',
  'Account.Report_Verified_Score__c',
  'Account.Report_Verdict__c',
  'Account.Report_Verified_At__c',
  'Account.Report_URL__c',
  'Account.Report_Synced_At__c',
  'Account.Report_Alert__c',
  'Account.Report_Alert_At__c',
  'Account.Report_Link_Source__c',
  'Account.Report_Score_Previous__c',
];

const LINK_SOURCE_WORDS = {
  auto: "Linked automatically by the connector's matching.",
  person: 'Linked by hand: someone set the report slug on this account.',
  admin: "Linked by an admin on the connector's review page.",
  request: 'Linked to the report that was requested for this account.',
};

/** A field's value, or null when it is empty or the record does not carry it. */
function fieldValue(record, apiName) {
  const field = record?.fields?.[apiName];
  if (!field) return null;
  const value = field.value;
  return value === undefined || value === '' ? null : value;
}

/** Whether the user may read the field at all: Lightning Data Service leaves out optional fields it may not. */
function carries(record, apiName) {
  return Boolean(record?.fields && Object.hasOwn(record.fields, apiName));
}

function formatDate(value, locale, timeZone) {
  if (value === null) return null;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return String(value);
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(at);
}

/** Only http and https addresses become links; anything else (javascript:, data:, a bare word) does not. */
export function webLink(value) {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The pillars field as the connector writes it: "Team 80 (40%); Market 70.5 (35%)". Each becomes a bar whose
 * length is its score out of 100 (the service publishes no scale; a score above 100 widens the scale to it).
 */
export function parsePillars(text) {
  if (typeof text !== 'string' || text.trim() === '') return [];
  const pillars = text.split('; ').map((part, index) => {
    const m = /^(.*) (-?\d+(?:\.\d+)?(?:e[+-]?\d+)?) \((\d+(?:\.\d+)?)%\)$/i.exec(part.trim());
    if (!m) return { key: `p${index}`, name: part.trim(), score: null, weight: null };
    return { key: `p${index}`, name: m[1], score: Number(m[2]), weight: `${m[3]}%` };
  });
  const top = Math.max(100, ...pillars.map((p) => p.score ?? 0));
  return pillars.map((p) => {
    const percent = p.score === null ? 0 : Math.max(0, Math.min(100, (p.score / top) * 100));
    return {
      key: p.key,
      name: p.name,
      scoreText: p.score === null ? '' : String(p.score),
      weightText: p.weight === null ? '' : `weight ${p.weight}`,
      label:
        p.score === null ? p.name : `${p.name}: ${p.score}${p.weight === null ? '' : `, weight ${p.weight}`}`,
      barStyle: `width: ${Number(percent.toFixed(2))}%`,
    };
  });
}

/** Where the actions lead: the connector's admin page for this record (admins decide there). */
export function adminLink(connectorUrl, installationId, recordId) {
  const base = webLink(connectorUrl);
  if (!base) return null;
  const root = base.replace(/\/+$/, '');
  if (!installationId || !recordId) return `${root}/admin`;
  return `${root}/admin/installations/${encodeURIComponent(installationId)}/records/${encodeURIComponent(recordId)}`;
}

function sentenceFor(status, record) {
  const slug = fieldValue(record, 'Report_Slug__c');
  const source = fieldValue(record, 'Report_Link_Source__c');
  switch (status) {
    case 'needs_review':
      return {
        title: 'Needs review',
        sentence:
          'Several published reports could be this account, and none is clearly it. An admin chooses one, ' +
          "or none, on the connector's admin page, which lists the candidates; the score appears here once one is chosen.",
        action: 'Choose the report (admin page)',
      };
    case 'no_match':
      return {
        title: 'No report',
        sentence:
          source === 'person' || source === 'admin'
            ? 'Someone decided that no published report is this account, so the connector will not link one on its own.'
            : 'No published report matches this account. An admin can link one by hand or request a report for it.',
        action: 'Request a report (admin page)',
      };
    case 'not_published':
      return {
        title: 'Report not published',
        sentence:
          `The linked report${slug ? ` (${slug})` : ''} is not published, so its score is not shown. ` +
          'The score comes back when the report is published again; an admin can link another report meanwhile.',
        action: 'Review the link (admin page)',
      };
    case 'requested':
      return {
        title: 'Report requested',
        sentence:
          'A report was requested for this account. Its score appears here when the report is published; nothing is needed until then.',
        action: 'See the request (admin page)',
      };
    case 'error':
      return {
        title: 'Could not read the report',
        sentence:
          'The connector could not read the linked report at its last try. It tries again on its own; ' +
          'if this stays, an admin can look at the record.',
        action: 'Look at the record (admin page)',
      };
    default:
      return {
        title: 'Not looked at yet',
        sentence:
          'The connector has not linked this account to a report yet. It does so at its next sync; nothing is needed from you.',
        action: 'Open the record (admin page)',
      };
  }
}

/**
 * The whole view for one state of the record. `record` is the getRecord answer (or undefined while it loads),
 * `error` the wire's error; `settings` holds connectorUrl, installationId, recordId, locale and timeZone.
 */
export function reportView(record, error, settings) {
  const link = adminLink(settings.connectorUrl, settings.installationId, settings.recordId);
  const base = {
    loading: false,
    failed: false,
    hidden: false,
    linked: false,
    unlinked: false,
    adminUrl: link,
    adminHint:
      link && !settings.installationId
        ? "This component has no installation id set, so the link opens the connector's admin page, not this record."
        : null,
  };
  if (error) {
    return {
      ...base,
      failed: true,
      message:
        'The report fields could not be loaded. Reload the page; if this stays, tell your Salesforce admin.',
    };
  }
  if (!record) return { ...base, loading: true, message: 'Loading the report…' };
  if (!carries(record, 'Report_Match_Status__c')) {
    return {
      ...base,
      hidden: true,
      message:
        'You cannot see the report fields. Ask your Salesforce admin for the Report_Viewer permission set.',
    };
  }

  const status = fieldValue(record, 'Report_Match_Status__c');
  if (status !== 'matched') {
    const words = sentenceFor(status, record);
    return { ...base, unlinked: true, ...words };
  }

  const { locale, timeZone } = settings;
  const score = fieldValue(record, 'Report_Score__c');
  const band = fieldValue(record, 'Report_Band__c');
  const verdict = fieldValue(record, 'Report_Verdict__c');
  const verifiedScore = fieldValue(record, 'Report_Verified_Score__c');
  const verifiedAt = formatDate(fieldValue(record, 'Report_Verified_At__c'), locale, timeZone);
  const previous = fieldValue(record, 'Report_Score_Previous__c');
  const scoredAt = formatDate(fieldValue(record, 'Report_Scored_At__c'), locale, timeZone);
  const alert = fieldValue(record, 'Report_Alert__c');
  const alertAt = formatDate(fieldValue(record, 'Report_Alert_At__c'), locale, timeZone);
  const source = fieldValue(record, 'Report_Link_Source__c');
  const url = fieldValue(record, 'Report_URL__c');
  const reportUrl = webLink(url);
  const verified = verdict !== null || verifiedScore !== null || verifiedAt !== null;
  const pillars = parsePillars(fieldValue(record, 'Report_Pillars__c'));

  return {
    ...base,
    linked: true,
    title: 'Report score',
    scoreText: score === null ? 'No score' : String(score),
    bandText: band === null ? 'No band' : band,
    scoredText: scoredAt ? `Scored ${scoredAt}` : null,
    pillars,
    hasPillars: pillars.length > 0,
    verificationText: verified
      ? `Verified: ${verdict ?? 'no verdict given'}${verifiedScore === null ? '' : ` (verified score ${verifiedScore})`}${verifiedAt ? `, ${verifiedAt}` : ''}.`
      : "This report is not verified: the score is the publisher's own, not checked by a verifier.",
    previousText:
      previous === null
        ? 'No earlier score: this is the first score the record has had.'
        : `Previous score ${previous}${scoredAt ? `, changed with the scoring of ${scoredAt}` : ''}.`,
    alertText: alert === null ? null : `Alert${alertAt ? ` (${alertAt})` : ''}: ${alert}`,
    reportUrl,
    reportUrlText:
      reportUrl === null
        ? url === null
          ? 'The report has no web address.'
          : 'The report address is not a web link, so it is not shown.'
        : null,
    sourceText:
      source === null
        ? 'Who made this link is not recorded.'
        : (LINK_SOURCE_WORDS[source] ?? `Linked (${source}).`),
    action: 'Review this link (admin page)',
  };
}
