"""The plugin -> host API: every action a plugin sends to LangBot through the runtime.

One module per area: :mod:`.messaging` (bots, messages, queries, the host), :mod:`.models`
(LLMs, embeddings, rerank, tools), :mod:`.knowledge`, :mod:`.storage`,
:mod:`.run_context` and :mod:`.run_ledger` (run-scoped), :mod:`.box`. The forwarding
table that lists them all is :data:`langbot_plugin.protocol.host_link.FORWARDED`. This
package imports nothing itself, so a plugin that only talks to bots does not load the
run-scoped models.
"""
