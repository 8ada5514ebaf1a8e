// Module service: see headers.
