import { z } from 'zod';
import { MAX_EVENTS, type EventItem } from '../../src/measurement/conversions.service.js';
import { sentence } from '../middleware/validate.js';
import { storableText, TEXT_RULE, unstorablePath } from '../middleware/json-rules.js';

/**
 * The edge's text rule (api/middleware/json-rules.ts), applied here per field so a bad event is answered
 * `invalid` with its reason instead of refusing the call.
 */
const noNul = storableText;
const NUL_RULE = TEXT_RULE;
const storable = (v: unknown) => unstorablePath(v) === null;

const Text = (max: number) => z.string().max(max, `must be at most ${max} characters`).refine(noNul, NUL_RULE);

const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
};

const LABEL = '[A-Za-z0-9-]+';
const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://(?:${LABEL}\\.)*[A-Za-z][A-Za-z0-9-]*(?::[0-9]{1,4})?(?:[/?#][!-~]*)?$`;

export const Utm = z
  .object({ source: Text(200), medium: Text(200), campaign: Text(200), term: Text(200), content: Text(200) })
  .partial()
  .strict()
  .meta({ id: 'Utm', description: 'UTM parameters, each at most 200 characters' });

/** `POST /measurement/visits`: a landing that did not come through a tracked link. */
export const VisitBody = z
  .object({
    url: Text(2_048)
      .refine(isHttpUrl, 'must be an absolute http(s) URL')
      // A pattern every string of which the URL parser takes as http(s) with a host (ASCII, a port under 10,000,
      // a last label that is not a number): a gateway never refuses less than the rule above.
      .meta({ pattern: HTTP_URL_PATTERN }),
    referrer: Text(2_048).optional(),
    utm: Utm.optional(),
  })
  .strict()
  .meta({ id: 'VisitRequest' });

export const VisitResponse = z
  .object({
    visitId: z.string(),
    channel: z.enum(['email', 'ads', 'seo', 'social', 'aeo', 'referral', 'direct']),
  })
  .strict()
  .meta({ id: 'VisitResponse' });

const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const PROPERTIES_MAX_KEYS = 50;
const PROPERTIES_MAX_BYTES = 4_096;
/** Above this a value is not a conversion's (and would not fit the stored numeric). */
const VALUE_MAX = 1e12;

/** One conversion event; a bad one is answered `invalid` with its reason, not refused with the call. */
export const ConversionEvent = z
  .object({
    eventId: z.string().regex(EVENT_ID, 'must be 1 to 128 characters of A-Za-z0-9_.:-'),
    name: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').refine(noNul, NUL_RULE),
    visitId: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters').refine(noNul, NUL_RULE).optional(),
    occurredAt: z.number().int('must be an integer (epoch milliseconds)'),
    value: z.number().min(0, 'must be at least 0').max(VALUE_MAX, `must be at most ${VALUE_MAX}`).optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code (3 uppercase letters)')
      .optional(),
    properties: z
      .record(z.string(), z.unknown())
      .refine((p) => Object.keys(p).length <= PROPERTIES_MAX_KEYS, `must have at most ${PROPERTIES_MAX_KEYS} keys`)
      .refine((p) => Buffer.byteLength(JSON.stringify(p)) <= PROPERTIES_MAX_BYTES, `must be at most ${PROPERTIES_MAX_BYTES} bytes as JSON`)
      .refine(storable, NUL_RULE)
      .optional(),
  })
  .strict()
  .refine((e) => e.value === undefined || e.currency !== undefined, { message: 'is required when value is given', path: ['currency'] });

/** ConversionEvent as JSON Schema, for /openapi.json: the item schema below never fails, so it documents this instead. */
const { $schema: _dialect, ...conversionEventDoc } = z.toJSONSchema(ConversionEvent, { io: 'input', unrepresentable: 'any' });

/** `POST /measurement/events`: 1 to 100 events. Only the envelope can make a 400. */
export const EventsBody = z
  .object({
    events: z
      // Never fails: a bad event becomes its first problem (readEvents answers it `invalid`), the call goes on.
      // So /openapi.json sets no rule on an item a gateway would refuse the call for; the event's own
      // schema rides along as `x-event` for readers and generators.
      .array(
        z
          .unknown()
          .transform((v) => {
            const r = ConversionEvent.safeParse(v, { reportInput: true });
            return r.success ? r.data : refusal(r.error.issues[0], v);
          })
          .meta({
            'x-event': conversionEventDoc,
            description:
              'A conversion event (see x-event: currency is required with value; properties at most 50 keys and 4,096 bytes as JSON); ' +
              'one that breaks a rule is answered `invalid` with its reason',
          }),
      )
      .min(1, 'must have at least 1 item')
      .max(MAX_EVENTS, `must have at most ${MAX_EVENTS} items`)
      .meta({ description: 'Conversion events; one that breaks a rule is answered `invalid` with its reason, the others are kept' }),
  })
  .strict()
  .meta({ id: 'ConversionEventsRequest' });

export const EventsResponse = z
  .object({
    events: z.array(
      z
        .object({
          eventId: z.string().nullable(),
          outcome: z.enum(['accepted', 'duplicate', 'invalid']),
          reason: z.string().optional(),
        })
        .strict(),
    ),
  })
  .strict()
  .meta({ id: 'ConversionEventsResponse' });

/** What a bad event becomes in the parsed body: the sentence of its first problem, and its eventId when readable. */
const REFUSED = Symbol('refused event');
type Refused = { [REFUSED]: { eventId: string | null; reason: string } };

function refusal(issue: z.core.$ZodIssue | undefined, input: unknown): z.output<typeof ConversionEvent> {
  const given = (input as { eventId?: unknown } | null)?.eventId;
  const eventId = typeof given === 'string' && EVENT_ID.test(given) ? given : null;
  let reason = 'event must be an object';
  if (issue && (issue.path.length > 0 || issue.code === 'unrecognized_keys')) reason = sentence(issue, 'body').replace(/^body /, 'event ');
  // The body's type says every item is an event; readEvents tells the refused ones apart.
  return { [REFUSED]: { eventId, reason } } as unknown as z.output<typeof ConversionEvent>;
}

/** The parsed body's events as the service takes them: each an event, or refused with its reason. */
export function readEvents(items: z.output<typeof ConversionEvent>[]): EventItem[] {
  return items.map((item) => (REFUSED in item ? (item as unknown as Refused)[REFUSED] : { event: item }));
}
