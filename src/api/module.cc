// Module api: see headers.
