// Module store: see headers.
