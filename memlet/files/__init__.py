"""Files of folders: upload, parsing, chunking, background processing, and the files agents open."""
