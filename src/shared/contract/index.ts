/**
 * THE IPC contract: every channel once, with its input schema (validated in
 * main for IPC and HTTP alike), its output type, and what it does.
 * Channels are `domain.verb`. The preload imports only types from here.
 *
 * Each domain's channels live in their own file beside this one, mirroring
 * src/main/api/handlers/; add a channel to its domain's file. The order of the
 * spreads below is the order of docs/reference/channels.md: scripts/reference.ts
 * follows them, and fails on a channel name given twice (a later spread would
 * silently replace the earlier one).
 */
import type { z } from 'zod'
import { appChannels } from './app'
import { postgresChannels } from './postgres'
import { mappingChannels } from './mapping'
import { browseChannels } from './browse'
import { embedChannels } from './embed'
import { recallChannels } from './recall'
import { configsChannels } from './configs'
import { mapChannels } from './map'
import { traceChannels } from './trace'
import { evalChannels } from './eval'
import { jobsChannels } from './jobs'

export type { AppInfo, OpenInfo, RecentFile, PickPurpose } from './app'
export type { PgConnectionInput, PgTarget, SavedPgConnection, PgTestInfo } from './postgres'
export type { Facets, MemoryRow, VectorInfo, MemoryDetail, SimilarResult, EventFilter } from './browse'
export type { EmbedderHealthInfo, EmbedStatus, EmbedModels, SettingsView } from './embed'
export type { RecallCompare, RecallAges } from './recall'
export type { TraceLogs } from './trace'
export type { BackfillReport, ImportIssue, ImportReport, ImportReportInfo } from './jobs'

export const contract = {
  ...appChannels,
  ...postgresChannels,
  ...mappingChannels,
  ...browseChannels,
  ...embedChannels,
  ...recallChannels,
  ...configsChannels,
  ...mapChannels,
  ...traceChannels,
  ...evalChannels,
  ...jobsChannels,
} as const

export type Contract = typeof contract
export type Channel = keyof Contract
/** What a caller passes (defaults optional). */
export type Input<C extends Channel> = z.input<Contract[C]['input']>
/** What a handler receives (defaults applied). */
export type ParsedInput<C extends Channel> = z.output<Contract[C]['input']>
export type Output<C extends Channel> = Contract[C]['output']
