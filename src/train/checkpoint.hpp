// train/checkpoint.hpp: --save DIR / --load DIR for ch11 (introduced in ch11; ch12 and ch13
// keep their checkpoints the same way, through the folder layer at the end of this file).
//   DIR/model.safetensors      every parameter under the twin's state_dict key (float32)
//   DIR/optimizer.safetensors  Adam's exp_avg / exp_avg_sq per parameter ("<key>.exp_avg", ...)
// Both carry in "__metadata__" a CRC-32 of each of their tensors ("crc32:<tensor>"), the
// format (ts_checkpoint 2), the model kind ("transformer" for
// ch11, "gpt" for ch12, "classifier" for ch13), the step and one random checkpoint_id;
// model.safetensors also every setting that changes the model's function
// (layers, d_model, heads, d_ff, norm, look_ahead, scale_scores, src_vocab, tgt_vocab).
//
// A checkpoint is one unit: the folder is replaced as a whole, never file by file.
//   1) both files are written into a new folder beside DIR (PARENT/.NAME.ts-save-XXXXXX),
//      each written in full and fsync'ed, then the new folder is fsync'ed;
//   2) one renameat2(RENAME_EXCHANGE) swaps it with DIR (macOS: renameatx_np(RENAME_SWAP); a
//      plain rename when DIR does not exist yet), and PARENT is fsync'ed: this is the commit;
//   3) the old checkpoint, now under the temporary name, is removed.
// A filesystem without the exchange (some network and FUSE filesystems, WSL's /mnt/c) gets
// two renames instead: DIR aside to PARENT/.NAME.ts-old-XXXXXX, then the new folder to DIR.
// A kill between the two leaves no DIR but the previous checkpoint whole under .ts-old-; the
// next --save or --load of DIR puts it back (under the lock) before anything else.
// A full disk, an I/O error or a kill (even SIGKILL) before 2) leaves DIR as it was; after 2)
// DIR holds the new checkpoint whole. SIGINT, SIGTERM and SIGHUP arriving during a save are
// held until it has finished (milliseconds) and then take effect, so they never leave a
// temporary folder; only SIGKILL or a power loss can, and the next --save into the same folder
// removes it. Saves lock PARENT (flock) for their few milliseconds, so two runs saving into one
// folder at once never mix: each swap is whole, the last one wins, and a leftover is removed
// only under the lock, when no save can be using it. The loader opens DIR once and reads both
// files through that handle, so a save swapping the folder meanwhile cannot mix them either.
#pragma once

#include <functional>
#include <string>

#include "train/adam.hpp"
#include "train/params.hpp"
#include "train/safetensors.hpp"

namespace ts::train {

constexpr const char* kCheckpointFormat = "2";  // __metadata__ "ts_checkpoint"
constexpr const char* kTransformerKind = "transformer";  // ch11's kind (its checkpoints before kinds had no "model")
constexpr int64_t kMaxCheckpointStep = 1000000000000;  // 10^12 steps: beyond any run of this course

// Before training: DIR must be a folder holding only a checkpoint (or not exist yet, its parent
// then created), in a parent folder we may write (the folder is replaced as a whole), and not a
// mount point. Removes what an earlier save killed mid-way left beside DIR. FileError with the fix.
void prepare_save_folder(const std::string& dir);
void save_checkpoint(const std::string& dir, const Model<float>& m, const Adam& adam);

// The model settings model.safetensors' metadata holds (cfg's other fields stay as given), and
// its step. FileError for a file that is not a checkpoint of this format, naming the fix.
ModelConfig checkpoint_settings(const std::string& dir, const ModelConfig& cfg);
// What --load does with the settings: a flag the user gave (given(flag)) must agree with the
// checkpoint (FileError naming both values otherwise); a flag not given takes the checkpoint's.
ModelConfig adopt_checkpoint_settings(const ModelConfig& asked, const ModelConfig& saved,
                                      const std::function<bool(const std::string&)>& given);

// Fills m.params and adam from DIR; m.layout says which keys and shapes are expected.
// Throws FileError naming the first missing, extra or mis-shaped tensor (FileIoError when the
// system fails a read).
void load_checkpoint(const std::string& dir, Model<float>& m, Adam& adam);

// ---- the folder layer every chapter's checkpoint uses (ch11, ch12, ch13)
// The two files' tensors and metadata.
struct CheckpointFiles {
  StFile weights, optim;  // model.safetensors, optimizer.safetensors
  StMeta wmeta, ometa;    // their __metadata__
};
// A model's tensors under their state_dict keys (specs over params), Adam's moments as
// "<key>.exp_avg" / "<key>.exp_avg_sq" once it has taken a step, and Adam's lr, betas and eps in
// the optimizer's metadata; the caller adds the model's settings to wmeta.
CheckpointFiles checkpoint_files(const std::vector<ParamSpec>& specs, const std::vector<float>& params, const Adam& adam);
// Saves f into DIR as one unit (see above); adds ts_checkpoint, model = kind, step and one new
// checkpoint_id to both metadata. FileError with the fix, FileIoError when the system fails.
void save_checkpoint_folder(const std::string& dir, const std::string& kind, int64_t step, CheckpointFiles f);
// DIR/model.safetensors' metadata (its header only), its format and kind checked.
StMeta checkpoint_metadata(const std::string& dir, const std::string& kind);
// Both files of DIR read through one handle (model.safetensors at most weight_bytes of tensors,
// the optimizer twice that), their format, kind, step and checkpoint_id checked. Returns the step.
int64_t read_checkpoint_folder(const std::string& dir, const std::string& kind, uint64_t weight_bytes,
                               CheckpointFiles& out);
// Each tensor's bytes are checked against the CRC-32 --save wrote in its file's metadata
// ("crc32:<tensor>"): a tensor that differs, or lacks one where the others have theirs, is a
// FileError naming it. A checkpoint saved before checksums loads unchecked, with a note.
// The notes a load left for the learner (at most one per run), taken out: the caller says them.
std::vector<FileError> take_checkpoint_notes();
// A metadata value that must be a whole number in [lo, hi] written with plain digits.
int64_t checkpoint_int(const StMeta& meta, const std::string& key, int64_t lo, int64_t hi, const std::string& path);
// The parameters of a model laid out by specs (total floats), and Adam's moments when step > 0,
// out of f: every key present, F32 and of its shape, no key the model lacks, exp_avg_sq >= 0.
// Nothing is returned unless everything is right.
struct CheckpointParams {
  std::vector<float> params, exp_avg, exp_avg_sq;
};
CheckpointParams checkpoint_params(const CheckpointFiles& f, const std::string& dir, const std::vector<ParamSpec>& specs,
                                   size_t total, int64_t step);

// ---- the checkpoint edge of a model whose modules hold their weights (ch12's, ch13's)
// One tensor of model.safetensors and the module parameters it holds: `params` (indices into the
// module's named_parameters()), whose values one after another are the tensor's. Most keys hold
// one parameter under its own name; a file that names things otherwise is one table of these at
// this edge (ch12: GPT-2's c_attn = the q, k and v Linears, train/gpt.hpp).
struct CheckpointKey {
  std::string key;
  std::vector<int64_t> shape;
  std::vector<size_t> params;
};
// one key per parameter, under its own name and shape
std::vector<CheckpointKey> keys_of(const NamedTensors& named);
// The module's values and Adam's moments (kept in named_parameters() order, adam.hpp) under the keys.
CheckpointFiles checkpoint_files(const NamedTensors& named, const std::vector<CheckpointKey>& keys, const Adam& adam);
// Read back from f (read_checkpoint_folder's, step its step): everything checked by
// checkpoint_params first, then the module's tensors and adam (step, moments) set.
void load_checkpoint_tensors(const CheckpointFiles& f, const std::string& dir, int64_t step, const NamedTensors& named,
                             const std::vector<CheckpointKey>& keys, Adam& adam);
// the bytes of the module's parameters, for read_checkpoint_folder's size cap
uint64_t parameter_bytes(const NamedTensors& named);

}  // namespace ts::train
