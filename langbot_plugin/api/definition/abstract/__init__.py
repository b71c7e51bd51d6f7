"""Abstract bases the LangBot host implements (its platform adapters and their event
loggers); plugins meet them only through the host."""
