"""Streaming speech recognition with pocketsphinx, driven by the asr-pocketsphinx example service.

Reads 16 kHz 16-bit little-endian mono PCM on stdin as it arrives and writes one JSON object per
line on stdout:

  {"type": "partial", "text": ...}                      the current hypothesis (with --partial)
  {"type": "final", "text": ..., "confidence": ...,
   "words": [{"word", "start", "end", "confidence"}]}   an utterance ended (silence, or end of input)
  {"type": "error", "message": ...}                     bad arguments (then exit status 2)

Utterances are cut by pocketsphinx's voice activity detection. Needs the Python bindings of
pocketsphinx: Debian's python3-pocketsphinx (with pocketsphinx-en-us for the model).
"""

import argparse
import json
import os
import re
import sys
import tempfile

FRAMES_PER_SECOND = 100  # pocketsphinx's default -frate
STEP_BYTES = 1600  # 50 ms of audio per process_raw call: utterance ends are seen within 50 ms


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fail(message):
    emit({"type": "error", "message": message})
    sys.exit(2)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", default="/usr/share/pocketsphinx/model/en-us")
    parser.add_argument("--partial", action="store_true", help="emit partial hypotheses")
    parser.add_argument("--phrases", help="JSON list of phrases: recognize only these")
    parser.add_argument("--jsgf", help="a JSGF grammar (text) to recognize with")
    return parser.parse_args()


def make_decoder(args):
    try:
        from pocketsphinx import Decoder
    except ImportError as e:
        fail("the pocketsphinx Python bindings are missing (apt-get install python3-pocketsphinx): %s" % e)
    model = args.model_dir
    config = Decoder.default_config()
    config.set_string("-hmm", os.path.join(model, "en-us"))
    config.set_string("-dict", os.path.join(model, "cmudict-en-us.dict"))
    config.set_string("-logfn", os.devnull)
    if not args.phrases and not args.jsgf:
        config.set_string("-lm", os.path.join(model, "en-us.lm.bin"))
    decoder = Decoder(config)
    grammar = None
    if args.phrases:
        grammar = phrase_grammar(decoder, json.loads(args.phrases))
    elif args.jsgf:
        grammar = args.jsgf
    if grammar is not None:
        with tempfile.NamedTemporaryFile("w", suffix=".gram", delete=False) as f:
            f.write(grammar)
        try:
            decoder.set_jsgf_file("grammar", f.name)
            decoder.set_search("grammar")
        except Exception as e:  # the bindings raise RuntimeError for a grammar they cannot use
            fail("the grammar cannot be used: %s" % e)
        finally:
            os.unlink(f.name)
    return decoder


def phrase_grammar(decoder, phrases):
    if not isinstance(phrases, list) or not phrases or not all(isinstance(p, str) for p in phrases):
        fail("phrases must be a non-empty list of strings")
    alternatives = []
    for phrase in phrases:
        words = re.findall(r"[a-z']+", phrase.lower())
        if not words:
            fail("phrase %r has no words" % phrase)
        unknown = [w for w in words if decoder.lookup_word(w) is None]
        if unknown:
            fail("phrase %r has words the dictionary does not know: %s" % (phrase, ", ".join(unknown)))
        alternatives.append(" ".join(words))
    return "#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = %s;\n" % " | ".join("( %s )" % a for a in alternatives)


def words_of(decoder):
    """The words of the last utterance; segment frames count from the start of the stream."""
    logmath = decoder.get_logmath()
    words = []
    for seg in decoder.seg():
        word = seg.word
        if word.startswith("<") or word.startswith("[") or word.startswith("+"):
            continue  # silence, sentence marks and fillers
        words.append({
            "word": re.sub(r"\(\d+\)$", "", word),
            "start": seg.start_frame / FRAMES_PER_SECOND,
            "end": (seg.end_frame + 1) / FRAMES_PER_SECOND,
            "confidence": min(1.0, max(0.0, logmath.exp(seg.prob))),
        })
    return words


def main():
    args = parse_args()
    decoder = make_decoder(args)
    in_utterance = False
    last_partial = ""

    def finish_utterance():
        nonlocal last_partial
        decoder.end_utt()
        hyp = decoder.hyp()
        text = hyp.hypstr.strip() if hyp is not None else ""
        if text:
            emit({
                "type": "final",
                "text": text,
                "confidence": min(1.0, max(0.0, decoder.get_logmath().exp(hyp.prob))),
                "words": words_of(decoder),
            })
        last_partial = ""

    decoder.start_utt()
    carry = b""
    while True:
        block = os.read(0, 8192)
        if not block:
            break
        block = carry + block
        if len(block) % 2:
            carry, block = block[-1:], block[:-1]
        else:
            carry = b""
        for i in range(0, len(block), STEP_BYTES):
            decoder.process_raw(block[i:i + STEP_BYTES], False, False)
            speaking = decoder.get_in_speech()
            if speaking and not in_utterance:
                in_utterance = True
            if in_utterance and not speaking:
                finish_utterance()
                in_utterance = False
                decoder.start_utt()
        if in_utterance and args.partial:
            hyp = decoder.hyp()
            text = hyp.hypstr.strip() if hyp is not None else ""
            if text and text != last_partial:
                last_partial = text
                emit({"type": "partial", "text": text})
    finish_utterance()


if __name__ == "__main__":
    main()
