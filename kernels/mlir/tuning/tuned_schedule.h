// Whether a tuning file's schedule can stand for its shape class: a name this
// nkbench reads, for the class's element type, within the ISA level it was
// tuned under. Checked when a file is read, so that a bad name is reported
// once, naming the file, instead of skipping every case of its class.
#pragma once

#include <optional>
#include <string>

#include "harness/core/isa.h"

namespace nkbench::mlir_backend {

// "tuned schedule NAME (FILE, class CLASS)": how messages name a tuned schedule.
std::string tunedScheduleOrigin(const std::string& schedule, const std::string& file, const std::string& shape_class);

// Why `schedule` cannot be the schedule of `shape_class` tuned under `isa`, as
// one line starting with tunedScheduleOrigin, or nullopt where it can.
std::optional<std::string> tunedScheduleProblem(Isa isa, const std::string& shape_class, const std::string& schedule,
                                                const std::string& file);

}  // namespace nkbench::mlir_backend
