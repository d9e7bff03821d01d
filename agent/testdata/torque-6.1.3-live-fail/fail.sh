#!/bin/sh
echo failing part
sleep 25
exit 3
