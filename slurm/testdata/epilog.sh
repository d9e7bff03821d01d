#!/bin/sh
sleep 8
