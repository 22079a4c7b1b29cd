"""Codec plumbing of :mod:`stompbox.io`: the decoders and encoders behind ``AudioFile`` and the container tools
they use.

- :mod:`.backends`: the decoder/encoder interface, libsndfile (soundfile) and FFmpeg (PyAV) backends
- :mod:`.codec_choice`: which decoder or encoder handles a file (the one place that knows all of them)
- :mod:`.wav`, :mod:`._pcm_kernels`, :mod:`.wav_writer`: the fast PCM WAV/RF64 reader and writer
- :mod:`.mp3_writer`, :mod:`.mp3_frames`: MP3 through LAME, MPEG frame headers
- :mod:`.ogg_pages`, :mod:`.flac_seektable`, :mod:`.channel_order`: Ogg pages, FLAC seek tables, per-format
  channel orders

Nothing here is public: users reach it through :class:`stompbox.io.AudioFile`. Each module is imported when first
needed.
"""
