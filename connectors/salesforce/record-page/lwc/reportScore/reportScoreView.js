import { FIELD_NAMES } from 'c/reportFields';
import {
  ALERT_TITLE,
  alertSentence,
  LINK_SOURCE_WORDS,
  NEVER_SYNCED_SENTENCE,
  NO_MATCH_DECIDED_SENTENCE,
  NO_PREVIOUS_SENTENCE,
  NO_VERIFICATION_SENTENCE,
  OPEN_REPORT_WORDS,
  previousSentence,
  STATE_TITLES,
  STATUS_SENTENCES,
  scoredSentence,
  verificationSentence,
} from 'c/sellerWords';

/**
 * What the report component shows for one Account, from the connector's Report_* fields as Lightning Data
 * Service returns them. Pure functions of the record and the component's settings; reportScore.js only wires
 * the record in and the template only lays the words out.
 *
 * The words a seller reads come from `c/sellerWords`, the HubSpot card's words (the generator writes that module
 * from connectors/hubspot/card/ui/seller-words.ts). A seller sees the score and why a record waits; this
 * component has no action of its own, so it says who acts (its own words, below), and it never links to the
 * connector's admin page, which sellers cannot open. The fields' API names come from `c/reportFields`, which
 * the generator writes from the connector's field table.
 */

/** Who acts where this component cannot: a Salesforce seller asks their admin, who decides in the connector. */
export const SALESFORCE_NEXT_STEPS = {
  needs_review:
    'Your admin chooses the report in the report connector. If you know which it is, tell your admin.',
  no_match: 'To ask for a report for this company, tell your admin.',
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

function sentenceFor(status, record) {
  const source = fieldValue(record, FIELD_NAMES.linkSource);
  switch (status) {
    case 'needs_review':
      return {
        title: STATE_TITLES.needs_review,
        sentence: STATUS_SENTENCES.needs_review,
        nextStep: SALESFORCE_NEXT_STEPS.needs_review,
      };
    case 'no_match':
      return {
        title: STATE_TITLES.no_match,
        sentence:
          source === 'person' || source === 'admin' ? NO_MATCH_DECIDED_SENTENCE : STATUS_SENTENCES.no_match,
        nextStep: SALESFORCE_NEXT_STEPS.no_match,
      };
    case 'not_published':
    case 'requested':
    case 'error':
      return { title: STATE_TITLES[status], sentence: STATUS_SENTENCES[status], nextStep: null };
    default:
      return { title: STATE_TITLES.never_synced, sentence: NEVER_SYNCED_SENTENCE, nextStep: null };
  }
}

/**
 * The whole view for one state of the record. `record` is the getRecord answer (or undefined while it loads),
 * `error` the wire's error; `settings` holds locale and timeZone.
 */
export function reportView(record, error, settings) {
  const base = { loading: false, failed: false, hidden: false, linked: false, unlinked: false };
  if (error) {
    return {
      ...base,
      failed: true,
      message:
        'The report fields could not be loaded. Reload the page; if this stays, tell your Salesforce admin.',
    };
  }
  if (!record) return { ...base, loading: true, message: 'Loading the report…' };
  if (!carries(record, FIELD_NAMES.matchStatus)) {
    return {
      ...base,
      hidden: true,
      message:
        'You cannot see the report fields. Ask your Salesforce admin for the Report_Viewer permission set.',
    };
  }

  const status = fieldValue(record, FIELD_NAMES.matchStatus);
  if (status !== 'matched') {
    const words = sentenceFor(status, record);
    return { ...base, unlinked: true, ...words };
  }

  const { locale, timeZone } = settings;
  const score = fieldValue(record, FIELD_NAMES.score);
  const band = fieldValue(record, FIELD_NAMES.band);
  const verdict = fieldValue(record, FIELD_NAMES.verdict);
  const verifiedScore = fieldValue(record, FIELD_NAMES.verifiedScore);
  const verifiedAt = formatDate(fieldValue(record, FIELD_NAMES.verifiedAt), locale, timeZone);
  const previous = fieldValue(record, FIELD_NAMES.scorePrevious);
  const scoredAt = formatDate(fieldValue(record, FIELD_NAMES.scoredAt), locale, timeZone);
  const alert = fieldValue(record, FIELD_NAMES.alert);
  const alertAt = formatDate(fieldValue(record, FIELD_NAMES.alertAt), locale, timeZone);
  const source = fieldValue(record, FIELD_NAMES.linkSource);
  const url = fieldValue(record, FIELD_NAMES.reportUrl);
  const reportUrl = webLink(url);
  const verified = verdict !== null || verifiedScore !== null || verifiedAt !== null;
  const pillars = parsePillars(fieldValue(record, FIELD_NAMES.pillars));

  return {
    ...base,
    linked: true,
    title: STATE_TITLES.matched,
    scoreText: score === null ? 'No score' : String(score),
    bandText: band === null ? 'No band' : band,
    scoredText: scoredAt ? scoredSentence(scoredAt) : null,
    openReportText: OPEN_REPORT_WORDS,
    pillars,
    hasPillars: pillars.length > 0,
    verificationText: verified
      ? verificationSentence(verdict, verifiedScore === null ? null : String(verifiedScore), verifiedAt)
      : NO_VERIFICATION_SENTENCE,
    previousText:
      previous === null
        ? NO_PREVIOUS_SENTENCE
        : previousSentence(
            Number(previous),
            score === null ? null : Number(score),
            String(previous),
            scoredAt,
          ),
    alertText: alert === null ? null : `${ALERT_TITLE}: ${alertSentence(alert, alertAt)}`,
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
  };
}
