/**
 * Every state of the reportScore component as Lightning Data Service would answer for it: the record (or the
 * wire's error) and the component's settings. The tests render each; `renderState` and `stateText` are also
 * what a preview page can use to show the same states from the same component.
 */

import ReportScore from 'c/reportScore';
import { getRecord } from 'lightning/uiRecordApi';
import { createElement } from 'lwc';

export const RECORD_ID = '001000000000001AAA';
export const INSTALLATION_ID = 'salesforce-00D000000000001EAA';
export const CONNECTOR_URL = 'https://report-connector.example.com';

const EMPTY = {
  Report_Match_Status__c: null,
  Report_Slug__c: null,
  Report_Score__c: null,
  Report_Band__c: null,
  Report_Scored_At__c: null,
  Report_Pillars__c: null,
  Report_Verified_Score__c: null,
  Report_Verdict__c: null,
  Report_Verified_At__c: null,
  Report_URL__c: null,
  Report_Synced_At__c: null,
  Report_Alert__c: null,
  Report_Alert_At__c: null,
  Report_Link_Source__c: null,
  Report_Score_Previous__c: null,
};

/** A getRecord answer holding the given field values; fields left out are fields the user may not read. */
export function accountRecord(values, { omit = [] } = {}) {
  const fields = {};
  for (const [name, value] of Object.entries({ ...EMPTY, ...values })) {
    if (omit.includes(name)) continue;
    fields[name] = { displayValue: null, value };
  }
  return { apiName: 'Account', id: RECORD_ID, fields };
}

const LINKED = {
  Report_Match_Status__c: 'matched',
  Report_Slug__c: 'acme-corp',
  Report_Score__c: 72.5,
  Report_Band__c: 'Strong',
  Report_Scored_At__c: '2026-11-02T10:00:00.000Z',
  Report_Pillars__c: 'Team 80 (40%); Market 70.5 (35%); Product 64 (25%)',
  Report_Verified_Score__c: 71,
  Report_Verdict__c: 'confirmed',
  Report_Verified_At__c: '2026-11-05T15:30:00.000Z',
  Report_URL__c: 'https://reports.example.com/r/acme-corp',
  Report_Synced_At__c: '2026-11-05T16:00:00.000Z',
  Report_Alert__c: 'High alert, score drop: Score fell — The score fell by 8 points',
  Report_Alert_At__c: '2026-11-04T09:00:00.000Z',
  Report_Link_Source__c: 'auto',
  Report_Score_Previous__c: 80.5,
};

/** name → { record | error, settings }. */
export const STATES = {
  linked: { record: accountRecord(LINKED) },
  linkedByPerson: { record: accountRecord({ ...LINKED, Report_Link_Source__c: 'person' }) },
  linkedByAdmin: { record: accountRecord({ ...LINKED, Report_Link_Source__c: 'admin' }) },
  linkedByRequest: { record: accountRecord({ ...LINKED, Report_Link_Source__c: 'request' }) },
  noVerification: {
    record: accountRecord({
      ...LINKED,
      Report_Verified_Score__c: null,
      Report_Verdict__c: null,
      Report_Verified_At__c: null,
    }),
  },
  noPreviousScore: { record: accountRecord({ ...LINKED, Report_Score_Previous__c: null }) },
  noAlert: { record: accountRecord({ ...LINKED, Report_Alert__c: null, Report_Alert_At__c: null }) },
  unsafeReportUrl: { record: accountRecord({ ...LINKED, Report_URL__c: 'javascript:alert(1)' }) },
  needsReview: {
    record: accountRecord({ Report_Match_Status__c: 'needs_review', Report_Link_Source__c: 'auto' }),
  },
  noMatch: { record: accountRecord({ Report_Match_Status__c: 'no_match' }) },
  noMatchDecided: {
    record: accountRecord({ Report_Match_Status__c: 'no_match', Report_Link_Source__c: 'admin' }),
  },
  notPublished: {
    record: accountRecord({ Report_Match_Status__c: 'not_published', Report_Slug__c: 'gone-corp' }),
  },
  requested: {
    record: accountRecord({ Report_Match_Status__c: 'requested', Report_Link_Source__c: 'request' }),
  },
  error: { record: accountRecord({ Report_Match_Status__c: 'error', Report_Slug__c: 'acme-corp' }) },
  notSynced: { record: accountRecord({}) },
  noFieldAccess: {
    record: accountRecord({}, { omit: Object.keys(EMPTY) }),
  },
  loadFailed: { error: { status: 500, body: { message: 'Server error' } } },
};

/** Mounts the component for one state and waits for it to render. The caller removes it from the document. */
export async function renderState(name) {
  const state = STATES[name];
  if (!state) throw new Error(`no state ${name}`);
  const element = createElement('c-report-score', { is: ReportScore });
  element.recordId = RECORD_ID;
  // Pages placed before the component stopped linking to the admin page still set these two; every state keeps them.
  element.connectorUrl = CONNECTOR_URL;
  element.installationId = INSTALLATION_ID;
  Object.assign(element, state.settings ?? {});
  document.body.appendChild(element);
  if (state.error) getRecord.error(state.error.body, state.error.status);
  else getRecord.emit(state.record);
  await Promise.resolve();
  await Promise.resolve();
  return element;
}

/** A block's words: its text nodes in order, each trimmed, joined by one space (spans sit side by side). */
function blockText(block) {
  const parts = [];
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) parts.push(child.textContent.replace(/\s+/g, ' ').trim());
      else walk(child);
    }
  };
  walk(block);
  return parts.filter((t) => t !== '').join(' ');
}

/** The text a person reads in the rendered component, one line per block, blank lines dropped. */
export function stateText(element) {
  return [...element.shadowRoot.querySelectorAll('h2, p, li')]
    .map(blockText)
    .filter((t) => t !== '')
    .join('\n');
}

/** Every state's rendered text, by state name (for a preview page to compare with what it shows). */
export async function allStateTexts() {
  const texts = {};
  for (const name of Object.keys(STATES)) {
    const element = await renderState(name);
    texts[name] = stateText(element);
    document.body.removeChild(element);
  }
  return texts;
}
