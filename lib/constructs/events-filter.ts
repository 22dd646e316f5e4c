/**
 * Which stream records start the events function (Lambda event filtering patterns, any of which
 * may match): an outbox item inserted with a change (functions/adapters/aws/dynamo-outbox.ts), and
 * one made pending again by a redelivery. Never the table's other writes, nor the dispatcher's own
 * claims and results. The stack's event source mapping uses these, and so does the stream source
 * that plays the mapping on this machine (test/aws/dynamodb-stream-event-source.ts).
 */
export const EVENTS_STREAM_FILTERS = [
  { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['delivery'] } } } },
  {
    eventName: ['MODIFY'],
    dynamodb: { NewImage: { entity: { S: ['delivery'] }, status: { S: ['pending'] } }, OldImage: { status: { S: [{ 'anything-but': ['pending'] }] } } },
  },
];
