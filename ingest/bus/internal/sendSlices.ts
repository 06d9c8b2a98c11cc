/**
 * A Kafka broker applies `message.max.bytes` (default 1 MiB) to a partition's whole record batch,
 * and kafkajs sends the messages one `send` gives a partition as one batch: a publish carrying more
 * than that for a partition is refused whole (MESSAGE_TOO_LARGE), however small each record is.
 * So the adapter sends a publish as consecutive slices, each at most `maxBytes` counted with the
 * batch's header and each record's framing (counted across partitions: a slice under the bound is
 * under it in every partition). A slice always takes at least one record: a record alone over the
 * bound is refused before sending (`maxRecordBytes`).
 */
export const BATCH_HEADER_BYTES = 61
/** The most a v2 record's framing adds to its key and value (length, attributes, deltas, key and value lengths, header count as varints). */
export const RECORD_FRAMING_BYTES = 21

/** `[from, to)` index ranges of `sizes` (each record's key + value bytes), in order, covering all of them. */
export const sendSlices = (sizes: ReadonlyArray<number>, maxBytes: number): ReadonlyArray<readonly [number, number]> => {
  const slices: Array<readonly [number, number]> = []
  let from = 0
  let bytes = BATCH_HEADER_BYTES
  for (let i = 0; i < sizes.length; i++) {
    const record = sizes[i]! + RECORD_FRAMING_BYTES
    if (i > from && bytes + record > maxBytes) {
      slices.push([from, i])
      from = i
      bytes = BATCH_HEADER_BYTES
    }
    bytes += record
  }
  if (sizes.length > from) slices.push([from, sizes.length])
  return slices
}
