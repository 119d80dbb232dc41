import {
  Alert,
  Button,
  ButtonRow,
  Divider,
  Flex,
  Heading,
  Link,
  LoadingSpinner,
  ProgressBar,
  StatusTag,
  Text,
  ToggleGroup,
} from '@hubspot/ui-extensions';
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { type CardData, type CardDecision, preselectedCandidate } from './card-data.js';
import { cardActUrl } from './card-paths.js';
import { CARD_PROPERTY_NAMES } from './card-property-names.js';
import { cardDataFromProperties } from './card-record.js';
import {
  ACT_MODAL_TITLE,
  ALERT_TITLE,
  alertSentence,
  CARD_NEXT_STEPS,
  formatDay,
  formatScore,
  LINK_SOURCE_WORDS,
  NEVER_SYNCED_SENTENCE,
  NO_MATCH_DECIDED_SENTENCE,
  NO_PREVIOUS_SENTENCE,
  NO_VERIFICATION_SENTENCE,
  NOT_FOUND_SENTENCE,
  OPEN_REPORT_WORDS,
  previousSentence,
  REFUSED_SENTENCE,
  REQUEST_STATE_WORDS,
  REVIEW_OPEN_WORDS,
  REVIEW_PRESELECT_NONE_SENTENCE,
  retryAfterSentence,
  STATE_TITLES,
  STATUS_SENTENCES,
  scoredSentence,
  UNREACHABLE_SENTENCE,
  verificationSentence,
} from './card-text.js';

/**
 * The report card on a HubSpot company record: the linked report's score and what stands behind it, or the
 * decision or request the record waits for. `CardView` draws one state and holds no data of its own (tests and
 * the preview render each state with it); `ReportCard` reads the record's own properties through HubSpot and
 * opens the connector's page, where the seller signs in with HubSpot, for a decision or a request.
 */

/** What the card shows: the connector's answer, or why there is none. */
export type CardState =
  | { kind: 'loading' }
  | { kind: 'data'; data: CardData }
  | { kind: 'unreachable' }
  | { kind: 'refused' }
  | { kind: 'not_found' }
  | { kind: 'busy'; retryAfterSeconds?: number };

export interface CardViewProps {
  state: CardState;
  /** A decision or request is on its way: its buttons are disabled. */
  sending?: boolean;
  /** Why the last decision or request did not go through. */
  actionError?: string | null;
  onDecide?: (decision: CardDecision) => void;
  onRequest?: () => void;
  /** Opens the connector's page for the record's review (the card holds no candidates of its own). */
  onAct?: () => void;
}

const HTTP_URL = /^https?:\/\//i;

function Sentence({ children, testId }: { children: string; testId?: string }) {
  return testId ? <Text testId={testId}>{children}</Text> : <Text>{children}</Text>;
}

function ScoreSection({ data }: { data: CardData }) {
  const report = data.report;
  if (!report) return null;
  const scoredDay = formatDay(report.scoredAt);
  return (
    <Flex direction="column" gap="sm">
      <Flex direction="row" gap="sm" align="center">
        <Heading>{report.score === null ? 'No score' : `Score ${formatScore(report.score)}`}</Heading>
        {report.band ? <StatusTag variant="info">{report.band}</StatusTag> : null}
      </Flex>
      {scoredDay ? <Text variant="microcopy">{scoredSentence(scoredDay)}</Text> : null}
      {report.pillars.map((pillar) => (
        <ProgressBar
          key={pillar.name}
          testId={`pillar-${pillar.name}`}
          title={pillar.name}
          value={pillar.score}
          maxValue={100}
          valueDescription={
            pillar.weight === null
              ? formatScore(pillar.score)
              : `${formatScore(pillar.score)} (${Math.round(pillar.weight * 100)}% of the score)`
          }
        />
      ))}
    </Flex>
  );
}

function VerificationSection({ data }: { data: CardData }) {
  const v = data.verification;
  if (!v) return <Sentence testId="verification">{NO_VERIFICATION_SENTENCE}</Sentence>;
  const verified = v.verifiedScore === null ? null : formatScore(v.verifiedScore);
  return (
    <Sentence testId="verification">
      {verificationSentence(v.verdict, verified, formatDay(v.verifiedAt))}
    </Sentence>
  );
}

function PreviousSection({ data }: { data: CardData }) {
  const p = data.previous;
  if (!p) return <Sentence testId="previous">{NO_PREVIOUS_SENTENCE}</Sentence>;
  const current = data.report?.score ?? null;
  return (
    <Sentence testId="previous">
      {previousSentence(p.score, current, formatScore(p.score), formatDay(p.changedAt))}
    </Sentence>
  );
}

function AlertSection({ data }: { data: CardData }) {
  if (!data.alert) return null;
  return (
    <Alert title={ALERT_TITLE} variant="warning">
      {alertSentence(data.alert.text, formatDay(data.alert.at))}
    </Alert>
  );
}

function LinkSection({ data }: { data: CardData }) {
  const url = data.report?.url;
  return (
    <Flex direction="column" gap="xs">
      {url && HTTP_URL.test(url) ? <Link href={url}>{OPEN_REPORT_WORDS}</Link> : null}
      {data.linkSource ? (
        <Sentence testId="link-source">{LINK_SOURCE_WORDS[data.linkSource]}</Sentence>
      ) : null}
    </Flex>
  );
}

function LinkedView({ data }: { data: CardData }) {
  return (
    <Flex direction="column" gap="sm">
      <ScoreSection data={data} />
      <AlertSection data={data} />
      <VerificationSection data={data} />
      <PreviousSection data={data} />
      <Divider />
      <LinkSection data={data} />
    </Flex>
  );
}

function ReviewView({
  data,
  sending,
  onDecide,
  onAct,
}: { data: CardData } & Pick<CardViewProps, 'sending' | 'onDecide' | 'onAct'>) {
  const candidates = data.review?.candidates ?? [];
  const preselected = preselectedCandidate(candidates, data.review?.tied);
  const [chosen, setChosen] = useState<string | null>(preselected);
  if (data.review === null) {
    return (
      <Flex direction="column" gap="sm">
        <Heading>{STATE_TITLES.needs_review}</Heading>
        <Sentence testId="status">{STATUS_SENTENCES.needs_review}</Sentence>
        <Sentence testId="next-step">{CARD_NEXT_STEPS.needs_review}</Sentence>
        <Button testId="review" variant="primary" disabled={sending === true} onClick={() => onAct?.()}>
          {REVIEW_OPEN_WORDS}
        </Button>
      </Flex>
    );
  }
  return (
    <Flex direction="column" gap="sm">
      <Heading>{STATE_TITLES.needs_review}</Heading>
      <Sentence testId="status">{STATUS_SENTENCES.needs_review}</Sentence>
      <Sentence testId="next-step">{CARD_NEXT_STEPS.needs_review}</Sentence>
      {preselected === null && candidates.length > 1 ? (
        <Sentence testId="tied">{REVIEW_PRESELECT_NONE_SENTENCE}</Sentence>
      ) : null}
      <ToggleGroup
        testId="candidates"
        toggleType="radioButtonList"
        name="candidate"
        label="Which report is this company?"
        value={chosen ?? ''}
        onChange={(value: string) => setChosen(value)}
        options={candidates.map((c) => ({
          label: c.name,
          value: c.slug,
          description: [
            c.place ?? 'place unknown',
            c.industry ?? 'industry unknown',
            c.score === null ? 'no score' : `score ${formatScore(c.score)}`,
            // Why the matcher proposes it (a name read in Latin letters, a former name, a namesake elsewhere).
            ...(c.why ? [c.why] : []),
          ].join(' · '),
        }))}
      />
      <ButtonRow>
        <Button
          testId="accept"
          variant="primary"
          disabled={sending === true || chosen === null}
          onClick={() => {
            if (chosen !== null) onDecide?.({ action: 'accept', slug: chosen });
          }}
        >
          This one
        </Button>
        <Button
          testId="reject"
          variant="secondary"
          disabled={sending === true}
          onClick={() => onDecide?.({ action: 'reject' })}
        >
          None of these
        </Button>
      </ButtonRow>
    </Flex>
  );
}

function NoMatchView({
  data,
  sending,
  onRequest,
}: { data: CardData } & Pick<CardViewProps, 'sending' | 'onRequest'>) {
  return (
    <Flex direction="column" gap="sm">
      <Heading>{STATE_TITLES.no_match}</Heading>
      <Sentence testId="status">
        {data.linkSource === 'person' || data.linkSource === 'admin'
          ? NO_MATCH_DECIDED_SENTENCE
          : STATUS_SENTENCES.no_match}
      </Sentence>
      <Sentence testId="next-step">{CARD_NEXT_STEPS.no_match}</Sentence>
      {data.request ? (
        <Sentence testId="request-state">{REQUEST_STATE_WORDS[data.request.state]}</Sentence>
      ) : null}
      {data.request?.state === 'pending' ? null : (
        <Button testId="request" variant="primary" disabled={sending === true} onClick={() => onRequest?.()}>
          Request a report
        </Button>
      )}
      <LinkSection data={data} />
    </Flex>
  );
}

function RecordView(props: CardViewProps & { data: CardData }) {
  const { data } = props;
  switch (data.status) {
    case null:
      return (
        <Flex direction="column" gap="sm">
          <Heading>{STATE_TITLES.never_synced}</Heading>
          <Sentence testId="status">{NEVER_SYNCED_SENTENCE}</Sentence>
        </Flex>
      );
    case 'matched':
      return <LinkedView data={data} />;
    case 'needs_review':
      return (
        <ReviewView
          data={data}
          sending={props.sending ?? false}
          onDecide={props.onDecide}
          onAct={props.onAct}
        />
      );
    case 'no_match':
      return <NoMatchView data={data} sending={props.sending ?? false} onRequest={props.onRequest} />;
    case 'requested':
      return (
        <Flex direction="column" gap="sm">
          <Heading>{STATE_TITLES.requested}</Heading>
          <Sentence testId="status">{STATUS_SENTENCES.requested}</Sentence>
          {data.request ? (
            <Sentence testId="request-state">{REQUEST_STATE_WORDS[data.request.state]}</Sentence>
          ) : null}
        </Flex>
      );
    default:
      return (
        <Flex direction="column" gap="sm">
          <Heading>{STATE_TITLES[data.status]}</Heading>
          <Sentence testId="status">{STATUS_SENTENCES[data.status]}</Sentence>
          {data.report ? <LinkedView data={data} /> : <LinkSection data={data} />}
        </Flex>
      );
  }
}

/** One state of the card, drawn. */
export function CardView(props: CardViewProps) {
  const { state } = props;
  let body: ReactNode;
  switch (state.kind) {
    case 'loading':
      body = <LoadingSpinner label="Loading the report" />;
      break;
    case 'unreachable':
      body = <Sentence testId="status">{UNREACHABLE_SENTENCE}</Sentence>;
      break;
    case 'refused':
      body = <Sentence testId="status">{REFUSED_SENTENCE}</Sentence>;
      break;
    case 'not_found':
      body = <Sentence testId="status">{NOT_FOUND_SENTENCE}</Sentence>;
      break;
    case 'busy':
      body = <Sentence testId="status">{retryAfterSentence(state.retryAfterSeconds)}</Sentence>;
      break;
    case 'data':
      body = <RecordView {...props} data={state.data} />;
      break;
  }
  return (
    <Flex direction="column" gap="sm">
      {props.actionError ? (
        <Alert title="Not done" variant="error">
          {props.actionError}
        </Alert>
      ) : null}
      {body}
    </Flex>
  );
}

/** What HubSpot's `openIframeModal` takes (`actions.openIframeModal`). */
export interface CardModal {
  uri: string;
  height: number;
  width: number;
  title: string;
}

export interface ReportCardProps {
  companyId: string;
  /** The portal from the card's context: only named to the sign-in page, which refuses a sign-in elsewhere. */
  portalId: string;
  /** The connector's public URL (`APP_URL`), which the app's `permittedUrls.iframe` declares. */
  appUrl: string;
  /**
   * HubSpot's `actions.fetchCrmObjectProperties`: the record's own properties, read by HubSpot with the viewing
   * user's rights. The card asks the connector for nothing.
   */
  readProperties: (names: string[]) => Promise<Record<string, string | null | undefined>>;
  /** HubSpot's `actions.openIframeModal`: the connector's page where the seller signs in and acts. */
  openModal: (modal: CardModal, onClose?: () => void) => void;
}

/** The card as HubSpot runs it: the record's properties, and the connector's sign-in page for any action. */
export function ReportCard({ companyId, portalId, appUrl, readProperties, openModal }: ReportCardProps) {
  const [state, setState] = useState<CardState>({ kind: 'loading' });
  const [reads, setReads] = useState(0);

  useEffect(() => {
    let live = true;
    void reads;
    readProperties(Object.values(CARD_PROPERTY_NAMES))
      .then(
        (properties): CardState => ({ kind: 'data', data: cardDataFromProperties(companyId, properties) }),
        (): CardState => ({ kind: 'unreachable' }),
      )
      .then((next) => {
        if (live) setState(next);
      });
    return () => {
      live = false;
    };
  }, [companyId, readProperties, reads]);

  // Decisions and requests are taken on the connector's page, after HubSpot says who the seller is; the card
  // reads the record again when the page is closed.
  const act = useCallback(() => {
    openModal(
      { uri: cardActUrl(appUrl, portalId, companyId), height: 640, width: 720, title: ACT_MODAL_TITLE },
      () => setReads((n) => n + 1),
    );
  }, [appUrl, portalId, companyId, openModal]);

  return <CardView state={state} onAct={act} onRequest={act} />;
}
