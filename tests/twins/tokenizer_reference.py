#!/usr/bin/python3
"""Reference twin for src/text/tokenizer.cpp: HF's slow BertTokenizer(do_lower_case=True).

HuggingFace transformers is not installable here, so this is a plain port of the code
path `BertTokenizer.from_pretrained("bert-base-uncased").tokenize(text)` runs:
  PreTrainedTokenizer.tokenize   (tokenization_utils.py): lower-case everything but the
                                 special tokens, char by char; split the text at them
  BertTokenizer._tokenize        (tokenization_bert.py): BasicTokenizer, then WordPiece
  BasicTokenizer / WordpieceTokenizer and the _is_* helpers, copied as HF wrote them,
using this interpreter's unicodedata directly (no tables).

As a module: BertTokenizer(vocab).encode(text, add_special_tokens=False) (twinlib uses it).
Usage: tokenizer_reference.py VOCAB IN.json OUT.json
  IN.json  {"texts": [str...], "words": [str...], "utf8_hex": [hex str...]}
  OUT.json {"unidata_version": str,
            "texts": [{"basic": [...], "tokens": [...], "ids": [...], "ids_special": [...]}...],
            "words": [[piece...]...],          # WordpieceTokenizer.tokenize(word)
            "utf8_valid": [bool...]}           # bytes.fromhex(h).decode("utf-8") succeeds
"""
import collections
import json
import re
import sys
import unicodedata

SPECIAL_TOKENS = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]  # all_special_tokens


# ---- tokenization_utils.py ---------------------------------------------------------
def _is_whitespace(char):
    if char == " " or char == "\t" or char == "\n" or char == "\r":
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char):
    if char == "\t" or char == "\n" or char == "\r":
        return False
    return unicodedata.category(char).startswith("C")


def _is_punctuation(char):
    cp = ord(char)
    if (cp >= 33 and cp <= 47) or (cp >= 58 and cp <= 64) or (cp >= 91 and cp <= 96) or (cp >= 123 and cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")


# ---- tokenization_bert.py ----------------------------------------------------------
def load_vocab(vocab_file):
    vocab = collections.OrderedDict()
    with open(vocab_file, "r", encoding="utf-8") as reader:
        tokens = reader.readlines()
    for index, token in enumerate(tokens):
        vocab[token.rstrip("\n")] = index
    return vocab


def whitespace_tokenize(text):
    text = text.strip()
    if not text:
        return []
    return text.split()


class BasicTokenizer:
    def __init__(self, do_lower_case=True, never_split=None, tokenize_chinese_chars=True, strip_accents=None):
        self.do_lower_case = do_lower_case
        self.never_split = set(never_split or [])
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.strip_accents = strip_accents

    def tokenize(self, text, never_split=None):
        never_split = self.never_split.union(set(never_split)) if never_split else self.never_split
        text = self._clean_text(text)
        if self.tokenize_chinese_chars:
            text = self._tokenize_chinese_chars(text)
        orig_tokens = whitespace_tokenize(text)
        split_tokens = []
        for token in orig_tokens:
            if token not in never_split:
                if self.do_lower_case:
                    token = token.lower()
                    if self.strip_accents is not False:
                        token = self._run_strip_accents(token)
                elif self.strip_accents:
                    token = self._run_strip_accents(token)
            split_tokens.extend(self._run_split_on_punc(token, never_split))
        return whitespace_tokenize(" ".join(split_tokens))

    def _run_strip_accents(self, text):
        text = unicodedata.normalize("NFD", text)
        return "".join(c for c in text if unicodedata.category(c) != "Mn")

    def _run_split_on_punc(self, text, never_split=None):
        if never_split is not None and text in never_split:
            return [text]
        output = []
        start_new_word = True
        for char in text:
            if _is_punctuation(char):
                output.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    output.append([])
                start_new_word = False
                output[-1].append(char)
        return ["".join(x) for x in output]

    def _tokenize_chinese_chars(self, text):
        output = []
        for char in text:
            if self._is_chinese_char(ord(char)):
                output += [" ", char, " "]
            else:
                output.append(char)
        return "".join(output)

    def _is_chinese_char(self, cp):
        return (
            (cp >= 0x4E00 and cp <= 0x9FFF)
            or (cp >= 0x3400 and cp <= 0x4DBF)
            or (cp >= 0x20000 and cp <= 0x2A6DF)
            or (cp >= 0x2A700 and cp <= 0x2B73F)
            or (cp >= 0x2B740 and cp <= 0x2B81F)
            or (cp >= 0x2B820 and cp <= 0x2CEAF)
            or (cp >= 0xF900 and cp <= 0xFAFF)
            or (cp >= 0x2F800 and cp <= 0x2FA1F)
        )

    def _clean_text(self, text):
        output = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            output.append(" " if _is_whitespace(char) else char)
        return "".join(output)


class WordpieceTokenizer:
    def __init__(self, vocab, unk_token, max_input_chars_per_word=100):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        output_tokens = []
        for token in whitespace_tokenize(text):
            chars = list(token)
            if len(chars) > self.max_input_chars_per_word:
                output_tokens.append(self.unk_token)
                continue
            is_bad = False
            start = 0
            sub_tokens = []
            while start < len(chars):
                end = len(chars)
                cur_substr = None
                while start < end:
                    substr = "".join(chars[start:end])
                    if start > 0:
                        substr = "##" + substr
                    if substr in self.vocab:
                        cur_substr = substr
                        break
                    end -= 1
                if cur_substr is None:
                    is_bad = True
                    break
                sub_tokens.append(cur_substr)
                start = end
            if is_bad:
                output_tokens.append(self.unk_token)
            else:
                output_tokens.extend(sub_tokens)
        return output_tokens


class BertTokenizer:
    def __init__(self, vocab_file):
        self.vocab = load_vocab(vocab_file)
        self.basic_tokenizer = BasicTokenizer(do_lower_case=True)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab, unk_token="[UNK]")
        # from_pretrained registers the special tokens as unique_no_split_tokens (sorted)
        self.unique_no_split_tokens = sorted(SPECIAL_TOKENS)

    # PreTrainedTokenizer.tokenize (transformers 4.x before the trie): returns the
    # basic-tokenizer words too, so the C++ basic_tokenize() can be checked.
    def tokenize_with_words(self, text):
        # do_lower_case: lower-case everything except the special tokens, one char at a time
        pattern = r"(" + r"|".join(re.escape(t) for t in SPECIAL_TOKENS) + r")|" + r"(.+?)"
        text = re.sub(pattern, lambda m: m.groups()[0] or m.groups()[1].lower(), text)

        def split_on_token(tok, text):
            result = []
            split_text = text.split(tok)
            for i, sub_text in enumerate(split_text):
                if i < len(split_text) - 1:  # plain-str special tokens strip both sides
                    sub_text = sub_text.rstrip()
                if i > 0:
                    sub_text = sub_text.lstrip()
                if i == 0 and not sub_text:
                    result += [tok]
                elif i == len(split_text) - 1:
                    if sub_text:
                        result += [sub_text]
                else:
                    if sub_text:
                        result += [sub_text]
                    result += [tok]
            return result

        if not text.strip():
            return [], []
        text_list = [text]
        for tok in self.unique_no_split_tokens:
            tokenized_text = []
            for sub_text in text_list:
                if sub_text not in self.unique_no_split_tokens:
                    tokenized_text += split_on_token(tok, sub_text)
                else:
                    tokenized_text += [sub_text]
            text_list = tokenized_text

        words, pieces = [], []
        for chunk in text_list:
            if chunk in self.unique_no_split_tokens:
                words.append(chunk)
                pieces.append(chunk)
                continue
            # BertTokenizer._tokenize
            for token in self.basic_tokenizer.tokenize(chunk, never_split=SPECIAL_TOKENS):
                words.append(token)
                if token in self.basic_tokenizer.never_split:
                    pieces.append(token)
                else:
                    pieces += self.wordpiece_tokenizer.tokenize(token)
        return words, pieces

    def tokenize(self, text):
        return self.tokenize_with_words(text)[1]

    def convert_tokens_to_ids(self, tokens):
        unk = self.vocab["[UNK]"]
        return [self.vocab.get(t, unk) for t in tokens]

    def encode(self, text, add_special_tokens=True):
        """HF encode() of one text: ids, by default wrapped as [CLS] ... [SEP]."""
        ids = self.convert_tokens_to_ids(self.tokenize(text))
        if add_special_tokens:
            ids = [self.vocab["[CLS]"]] + ids + [self.vocab["[SEP]"]]
        return ids


def main():
    vocab_file, in_path, out_path = sys.argv[1:4]
    tok = BertTokenizer(vocab_file)
    with open(in_path, encoding="utf-8") as f:
        req = json.load(f)
    texts = []
    for text in req.get("texts", []):
        words, pieces = tok.tokenize_with_words(text)
        texts.append({"basic": words, "tokens": pieces, "ids": tok.convert_tokens_to_ids(pieces),
                      "ids_special": tok.encode(text, add_special_tokens=True)})
    words = [tok.wordpiece_tokenizer.tokenize(w) for w in req.get("words", [])]
    valid = []
    for h in req.get("utf8_hex", []):
        try:
            bytes.fromhex(h).decode("utf-8")
            valid.append(True)
        except UnicodeDecodeError:
            valid.append(False)
    out = {"unidata_version": unicodedata.unidata_version, "texts": texts, "words": words,
           "utf8_valid": valid}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=True)


if __name__ == "__main__":
    main()
