// Files compiled into the pfsim binary (the onboard include set, the shipped
// kernels and cases), grouped in named trees, so that a pfsim binary copied
// anywhere can still compile kernels. Written by loader/embed.sh.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pfsim {

struct EmbeddedFile {
    const char* path;  // relative to the tree's root
    const char* content;
    size_t size;  // bytes of content (which may hold NUL bytes)
};

// The files of `tree` ("include", "kernels"), sorted by path; empty if unknown.
const std::vector<EmbeddedFile>& embedded_files(const std::string& tree);

struct RegisterEmbeddedFiles {
    RegisterEmbeddedFiles(const char* tree, const EmbeddedFile* files, size_t count);
};

}  // namespace pfsim
